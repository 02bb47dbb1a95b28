/* SPDX-License-Identifier: MIT */
#pragma once

/* How bgrund talks to a running job's supervisor, which needs no live
 * bgrund and no bus: signals through the supervisor's verified pidfd.
 *   SIGTERM   kill the job at once: cgroup.kill, confirm, publish
 *   SIGUSR1   stop it gracefully, with a value (sigqueue's SI_QUEUE, so the
 *             kernel lets it cross processes) that carries the signal to
 *             send to every process of the job and the grace to wait
 *             before cgroup.kill */

#include <signal.h>
#include <stdint.h>

#define SUPERVISOR_KILL_SIGNAL SIGTERM
#define SUPERVISOR_STOP_SIGNAL SIGUSR1

/* grace_usec fits 40 bits (the contract caps it at 10 min), the signal 8. */
static inline uint64_t stop_request_pack(int sig, uint64_t grace_usec) {
        return ((uint64_t) (sig & 0xff) << 40) | (grace_usec & ((UINT64_C(1) << 40) - 1));
}

static inline void stop_request_unpack(uint64_t v, int *ret_sig, uint64_t *ret_grace_usec) {
        *ret_sig = (int) ((v >> 40) & 0xff);
        *ret_grace_usec = v & ((UINT64_C(1) << 40) - 1);
}
