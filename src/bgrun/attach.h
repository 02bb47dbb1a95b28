/* SPDX-License-Identifier: MIT */
#pragma once

/* run --wait: staying with a job until it ends. Its output streamed here,
 * this standard input forwarded to it (--stdin, --tty), this terminal in raw
 * mode and its size passed on (--tty), and an interrupt (SIGINT, SIGTERM,
 * SIGHUP) that stops the job gracefully, a second one at once. */

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct AttachOptions {
        bool output;   /* stream the output (not with --json) */
        bool input;    /* forward stdin with WriteInput, close at its end */
        bool tty;      /* the job is on a terminal: raw mode, window size */
        bool quiet;
        bool from_end; /* attach: the output from now on, not what the job wrote before */
} AttachOptions;

/* Blocks the interrupting signals, to be taken up by attach_job(): call
 * before Launch, so that an interrupt during the call stops the job it
 * started. */
int attach_block_signals(bool tty);

/* The local terminal's size, for Launch's TtyRows / TtyColumns; false if
 * stdin is no terminal. */
bool attach_terminal_size(unsigned short *ret_rows, unsigned short *ret_columns);

/* Stays with job id until it ends. Returns bgrun's exit status: the job's
 * (its final record then in *ret_record, if given), 128 + the signal if
 * interrupted, 0 when detached (no record for these two); or a negative
 * error it logged. */
int attach_job(sd_bus *bus, const char *id, const AttachOptions *o, json_object **ret_record);

/* run --stdin without --wait: stdin to the job until its end, then EOF. */
int forward_input(sd_bus *bus, const char *id, int fd);

/* One WriteInput call (data may be empty); waits while the job's buffer is
 * full. Returns 0, or -ENOENT when the job takes no more input (ended, or
 * its input closed), logged only if log_no_input. */
int write_input(sd_bus *bus, const char *id, const void *data, size_t size, bool close_input, bool log_no_input);
/* The same, giving up with -EINTR when interrupt_fd (a signalfd) becomes
 * readable while it waits. */
int write_input_until(sd_bus *bus, const char *id, const void *data, size_t size, bool close_input,
                      bool log_no_input, int interrupt_fd);
