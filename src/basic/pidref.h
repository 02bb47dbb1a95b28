/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* A reference to one process that survives PID reuse: the pid, a pidfd, and
 * a start token "<boot-id>-<starttime>[-<pidfs-inode>]" read from /proc after
 * the pidfd was opened. Every signal bgrun sends goes through pidref_kill(). */

#define PIDREF_TOKEN_MAX 96

typedef struct PidRef {
        pid_t pid;
        int fd; /* pidfd, or -EBADF */
        char token[PIDREF_TOKEN_MAX];
} PidRef;

#define PIDREF_NULL ((PidRef){ .pid = 0, .fd = -EBADF, .token = "" })

typedef enum PidRefState {
        PIDREF_OWNED,   /* the pid still is the process the token names */
        PIDREF_FOREIGN, /* the pid is alive but is some other process */
        PIDREF_GONE,    /* the process exited (or the pid is free) */
} PidRefState;

/* Open a pidfd for pid and compute its token. The token is read after the
 * pidfd is open and the pidfd is checked to still be alive afterwards, so a
 * pid reused in between is caught (-ESRCH). -EOPNOTSUPP without pidfd_open. */
int pidref_set_pid(PidRef *ref, pid_t pid);

/* Open a pidfd for pid and compare the process with expected_token. Returns
 * PIDREF_OWNED (and fills ret, when non-NULL, with a live reference),
 * PIDREF_FOREIGN, PIDREF_GONE, or -errno when the answer cannot be had. */
int pidref_verify(pid_t pid, const char *expected_token, PidRef *ret);

/* Re-check a held reference: PIDREF_OWNED while the pidfd's process lives. */
int pidref_check(const PidRef *ref);

/* pidfd_send_signal on a held reference. Never falls back to kill(2): without
 * a pidfd this refuses with -EBADF. */
int pidref_kill(const PidRef *ref, int sig);

/* Compute the start token of pid into buf (at least PIDREF_TOKEN_MAX bytes).
 * pidfd may be -EBADF, then no pidfs inode is included. */
int process_start_token(pid_t pid, int pidfd, char *buf, size_t len);

/* The pid pidfd refers to, from its fdinfo: -ESRCH once it exited. */
int pidfd_get_pid(int pidfd, pid_t *ret);

/* Close the pidfd and reset to PIDREF_NULL. */
void pidref_done(PidRef *ref);

/* True when two tokens name the same process. Tokens with and without a pidfs
 * inode compare on boot id and start time only. */
bool pidref_tokens_match(const char *a, const char *b);
