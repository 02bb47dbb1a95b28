/* SPDX-License-Identifier: MIT */
#pragma once

/* The control socket bgrund talks to (supervisor-protocol.h), and the
 * job's input and terminal (Stdin=pipe, Tty=true), held by the
 * supervisor so that they outlive bgrund: the input pipe, whose write end
 * bgrund gets over the control socket (supervisor-protocol.h), and for a
 * terminal the pty's master, between which and the job's pipes the
 * supervisor relays:
 *   input pipe → master        what WriteInput wrote, then VEOF once closed
 *   master → output pipe       what the terminal shows: the job's output
 * Nothing here blocks: every descriptor is non-blocking and polled by
 * supervise.c's loop. */

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "job-record.h"

#define INPUT_CONTROL_POLLS 5

typedef struct InputControl {
        JobStdin mode;
        int dir_fd;          /* the job's directory, borrowed */
        int listen_fd;       /* the control socket */
        int conn_fd;         /* bgrund's connection, the latest one */
        int write_fd;        /* the input pipe's write end, ours to hand on; -EBADF once closed */
        int read_fd;         /* pipe: the job's stdin until the fork; tty: relayed into the master */
        int master_fd;       /* tty */
        int slave_fd;        /* tty: the job's stdio and controlling terminal, until the fork */
        /* tty in a sandbox: the job's terminal comes from its own devpts
         * instance, made by the child, which sends the master over this
         * socket pair (ours, the child's until the fork) */
        int terminal_fd, child_terminal_fd;
        int output_fd;       /* tty: the output pipe's write end, the master's output goes there */
        char to_master[4096];
        size_t to_master_len, to_master_off;
        bool input_eof;      /* tty: the input pipe ended; VEOF is due */
        bool veof_sent;
        char to_output[16384];
        size_t to_output_len, to_output_off;
        bool master_hup;     /* tty: every slave descriptor is closed */
        bool disk_report_due; /* a new connection: bgrund wants to hear what the output keeps */
        bool disk_limit_new;  /* bgrund said disk_limit */
        uint64_t disk_limit;
} InputControl;

#define INPUT_CONTROL_NULL                                                                       \
        ((InputControl) { .dir_fd = -EBADF, .listen_fd = -EBADF, .conn_fd = -EBADF, .write_fd = -EBADF, \
                          .read_fd = -EBADF, .master_fd = -EBADF, .slave_fd = -EBADF, .output_fd = -EBADF, \
                          .terminal_fd = -EBADF, .child_terminal_fd = -EBADF })

/* Make the input pipe (and the terminal) and listen on the control socket
 * (for every job: its disk budget comes that way). output_fd (tty only) is
 * the output pipe's write end, taken over. On failure *ret_step says what
 * failed. */
int input_control_open(InputControl *ic, int dir_fd, const JobSpec *spec, int output_fd, const char **ret_step);

/* The child's stdin (-EBADF: /dev/null) and, for a terminal, its stdout
 * and stderr too (else -EBADF: the output pipe). */
int input_control_child_stdin(const InputControl *ic);
int input_control_child_tty(const InputControl *ic);

/* For a sandboxed terminal job: the socket over which the child sends the
 * master of the terminal it made in its own devpts instance (-EBADF: the
 * terminal is ours, input_control_child_tty()). */
int input_control_child_terminal(const InputControl *ic);
/* Once the child exec'd: take that master. */
int input_control_receive_terminal(InputControl *ic);

/* In the parent after the fork: drop the child's ends. */
void input_control_forked(InputControl *ic);

/* What supervise.c's loop polls for us, and what to do with its answer. */
void input_control_poll(const InputControl *ic, struct pollfd p[INPUT_CONTROL_POLLS]);
void input_control_dispatch(InputControl *ic, const struct pollfd p[INPUT_CONTROL_POLLS]);

/* Tell bgrund the teardown slot was written (supervisor-protocol.h), on
 * its connection, or one it made since the loop last looked. */
void input_control_send_teardown(InputControl *ic);
/* Tell bgrund what the job's output keeps on disk ('U'), if it is there. */
void input_control_send_disk_used(InputControl *ic, uint64_t used);

/* Once the job is ending: close and unlink the control socket, so that
 * bgrund is refused at once (no input) rather than kept waiting while the
 * teardown blocks us. */
void input_control_stop_listening(InputControl *ic);

/* After the job's end: relay what the terminal still has to the output,
 * then close the output pipe's end (so the output relay sees EOF). false
 * while the output pipe is full: empty it and call again. */
bool input_control_drain_output(InputControl *ic);

/* Unlink the socket, close everything. */
void input_control_done(InputControl *ic);
