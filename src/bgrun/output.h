/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's output, copied to stdout: through the descriptor from OpenOutput,
 * or, where fd passing does not work (or bgrund has no descriptor to give:
 * a job past its cap that runs), in chunks through ReadOutput.
 *
 * Offsets count what the job wrote. Where bytes were dropped (past
 * OutputMaxBytes=, or for KeepFree=) before they were printed, one marker
 * line stands for them, as in the kept output OpenOutput hands out:
 *   "\n[bgrun: N bytes of output dropped here]\n"
 * A follower prints what it reads as the job runs; if the job outruns it
 * into the dropped middle, it waits for the job's end and prints the marker
 * and the final tail then (so at most one marker, and every byte printed is
 * one the job wrote, in order). */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct OutputSource {
        const char *id;
        int fd;          /* -EBADF: use ReadOutput */
        bool regular;    /* a file: read() returning 0 means "nothing more yet" */
        bool live;       /* fd is the running job's output file as written: byte for byte what the
                          * job wrote until the record says truncated, when it stops growing */
        uint64_t offset; /* the next byte wanted, counted as the job wrote them */
        uint64_t end;    /* output_pump() by ReadOutput: stop here (output_bytes when it began); 0: not yet known */
        bool skipping;   /* output_follow(): the job outran us into the dropped middle */
        bool no_wait_output; /* bgrund is one release older: followed by Wait's pacing alone */
} OutputSource;

/* Sets up reading the output of job id: its descriptor, or ReadOutput where
 * fd passing does not work. With ret_record, also the record from a Wait
 * of wait_usec sent with it (no round trip of its own): a follower's first
 * round, for output_follow(). */
int output_open(sd_bus *bus, const char *id, uint64_t wait_usec, OutputSource *ret, json_object **ret_record);
void output_source_done(OutputSource *src);

/* Copies all output there is now (of a running job: what it had written
 * when this began). Returns 1 at a definitive end. */
int output_pump(sd_bus *bus, OutputSource *src, int wait_ms);

/* What a follower does between rounds: step (if set) runs each round before
 * a call that waits up to wait_usec in bgrund for output or the job's end
 * (WaitOutput; Wait from an older bgrund), its pacing; a step that returns
 * > 0 ends the following there (an interrupt), < 0 is an error it logged. */
typedef struct FollowHooks {
        uint64_t wait_usec;
        int (*step)(sd_bus *bus, void *userdata);
        void *userdata;
} FollowHooks;

/* Streams the job's output until the job has ended and every byte was
 * written; the final record goes to ret. hooks may be NULL. first (may be
 * NULL; taken over) is the first round's record, from output_open().
 * Returns 0, or what hooks->step returned when not 0. */
int output_follow(sd_bus *bus, OutputSource *src, FollowHooks *hooks, json_object *first, json_object **ret);

/* One ReadOutput call: up to max bytes of job id's output from offset. The
 * bytes point into *ret_reply, which the caller unrefs; they start at
 * *ret_next - *ret_size (past offset where bytes were dropped). */
int call_read_output(sd_bus *bus, const char *id, uint64_t offset, size_t max, sd_bus_message **ret_reply,
                     const void **ret_data, size_t *ret_size, uint64_t *ret_next, int *ret_complete);

/* logs --plain: what is copied to stdout from here on goes through
 * terminal-text.h's filter; output_end() writes the line it holds. */
void output_set_plain(bool on);
int output_end(void);

/* Makes src start at the last `lines` lines of the output there is now
 * (0: at its end), as tail -n does. */
int output_seek_tail(sd_bus *bus, OutputSource *src, uint64_t lines);
