/* SPDX-License-Identifier: MIT */
#pragma once

/* The command's output, relayed: its stdout and stderr are one pipe whose
 * read end only the supervisor holds, so the command never has a descriptor
 * of a record file (its quota, a full disk or ftruncate() cannot touch a
 * record). The supervisor splice()s the pipe into the job's output files as
 * output-layout.h lays them out: all of it up to OutputMaxBytes=, then the
 * first and the last halves, counting what it drops, and dropping too while
 * the state filesystem has less than KeepFree= free, or while its owner has
 * no budget left (bgrund says, over the control socket). */

#include <stdbool.h>
#include <stdint.h>

#include "job-record.h"
#include "output-layout.h"
#include "supervisor-protocol.h"

typedef struct OutputRelay {
        int dir_fd;            /* the job's directory, borrowed */
        char job_id[JOB_ID_MAX]; /* for messages (a copy: the spec need not outlive the relay) */
        int pipe_fd;           /* the read end, non-blocking */
        int output_fd;         /* `output` */
        int tail_fd;           /* `output.tail`, made when the ring is */
        int state_fd;          /* `output.state`, made (empty) at the start */
        int null_fd;           /* where dropped bytes go */
        uint64_t output_ino;
        uint64_t keep_free;
        uint64_t pipe_size;
        OutputLayout layout;   /* as the supervisor has it */
        OutputLayout known;    /* as readers know it: published, or `output` itself while LINEAR */
        bool blind;            /* the state cannot be published: drop, change nothing readers know */
        bool broken;           /* an output file failed, not for want of room: drop from now on */
        uint64_t blind_dropped;
        bool grew_pipe;
        uint64_t hold_until;   /* CLOCK_MONOTONIC µs: the pipe waits until then (a job writing a lot) */
        bool low;              /* below KeepFree= at the last look */
        bool warned_low;
        bool eof;
        uint64_t checked_total; /* layout.total and the time at the last look at the free space */
        uint64_t checked_usec;
        uint64_t check_interval; /* bytes until the next look */
        /* The owner's budget (OutputMaxBytesPerUser=), as bgrund hands it
         * out (supervisor-protocol.h): */
        uint64_t disk_limit;   /* the bytes the output may keep on disk */
        bool disk_asked;       /* told bgrund since disk_limit came */
        bool disk_report_due;  /* to tell bgrund what the output keeps */
        uint64_t disk_reported_usec;
        uint64_t disk_waiting_since; /* at the limit, holding the pipe for an answer */
        bool over_budget;      /* no room: the files grow no more */
        bool finishing;        /* output_relay_finish(): no answer can come now */
} OutputRelay;

#define OUTPUT_RELAY_NULL                                                                   \
        ((OutputRelay) {                                                                    \
                .dir_fd = -EBADF, .pipe_fd = -EBADF, .output_fd = -EBADF, .tail_fd = -EBADF, \
                .state_fd = -EBADF, .null_fd = -EBADF, .disk_limit = SUPERVISOR_DISK_WINDOW, \
        })

/* Open `output` (emptied) and make the pipe. *ret_write_fd is the end for
 * the command's stdout and stderr (close-on-exec, like every descriptor
 * here: the child dup2()s it). On failure *ret_step says what failed. */
int output_relay_open(OutputRelay *r, int dir_fd, const JobSpec *spec, int *ret_write_fd, const char **ret_step);
void output_relay_done(OutputRelay *r);

/* What the output keeps on disk now (its files), and bgrund's answer to
 * it: how much it may keep. */
uint64_t output_relay_disk_used(const OutputRelay *r);
void output_relay_set_disk_limit(OutputRelay *r, uint64_t limit);
/* disk_report_due was acted on: told bgrund, or there was nobody to tell. */
void output_relay_disk_reported(OutputRelay *r);

/* Relay what the pipe has now, at most about budget bytes (so that the
 * caller's loop goes on serving signals and timers). 1 at EOF (every writer
 * closed its end and all was read), 0 when the pipe is empty or the budget
 * used up, < 0 on an error of the pipe itself only: an output file that
 * fails has the output dropped (and counted), the pipe drained all the
 * same, so the job never blocks on its output. */
int output_relay_pump(OutputRelay *r, uint64_t budget);

/* How long the caller's loop should leave the pipe alone (µs), to let a job
 * that writes a lot fill it rather than wake us for every few KiB; 0 for
 * not at all. */
uint64_t output_relay_hold_usec(const OutputRelay *r);

/* The relay is at its disk limit with output in the pipe, waiting for
 * bgrund's answer (at most DISK_WAIT_USEC): the job's end must wait for it
 * too, or output its owner has room for would be dropped at the finish. */
bool output_relay_awaits_budget(const OutputRelay *r);

/* After the teardown: read what is left, until EOF, but no more than the
 * pipe can hold if something outside the job still writes (or holds the
 * end open); then give the output its final form (compacted, if anything
 * was dropped and there is room) and publish it. */
void output_relay_finish(OutputRelay *r);

/* output_bytes (what the job wrote) and output_dropped_bytes. */
void output_relay_summary(const OutputRelay *r, uint64_t *ret_bytes, uint64_t *ret_dropped);
