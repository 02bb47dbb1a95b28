/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's proxy (AllowedDomains, contract: "Network: shared within a
 * session, and by name"): bgrun-proxy, started by the supervisor as the
 * job's user with no capability, in the supervisor's cgroup (the job's),
 * outside the job's network, serving the listening socket the job's child
 * made on the job's loopback. What it refuses comes back a line at a time
 * and is kept as the record's network_denied (core/network-denied.h),
 * written at most once a second. It goes with the job. */

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "job-record.h"
#include "network-denied.h"
#include "pidref.h"

#define PROXY_PROCESS_POLLS 1
/* The most a proxy may take to say it is ready, ms. */
#define PROXY_READY_TIMEOUT_MSEC 5000
/* network_denied written at most this often, µs. */
#define PROXY_DENIED_WRITE_USEC 1000000ULL

typedef struct ProxyProcess {
        PidRef pid;
        int report_fd;               /* its refusals, "D HOST\n" each */
        char line[DOMAIN_NAME_MAX + 8];
        size_t line_len;
        bool line_too_long;          /* the rest of a line past line[]: dropped */
        NetworkDenied *denied;       /* NULL until the first refusal */
        bool changed;                /* since it was last written */
        uint64_t written_at;         /* CLOCK_MONOTONIC µs */
} ProxyProcess;

#define PROXY_PROCESS_NULL ((ProxyProcess) { .pid = PIDREF_NULL, .report_fd = -EBADF })

/* Start it for spec's job on listen_fd (the socket the child made; ours is
 * closed by the call) and wait until it is ready: 0, or -errno with
 * *ret_step saying what failed. */
int proxy_process_start(ProxyProcess *p, const JobSpec *spec, int listen_fd, const char **ret_step);

/* Its report pipe in the supervisor's poll (fd -EBADF when none), read. */
void proxy_process_poll(const ProxyProcess *p, struct pollfd *pfd);
void proxy_process_dispatch(ProxyProcess *p, const struct pollfd *pfd, int dir_fd);
/* How long the poll may wait before a refusal is due to be written; 0:
 * nothing is. */
uint64_t proxy_process_hold_usec(const ProxyProcess *p);
/* What is due, written (dir_fd: the job's directory). */
void proxy_process_flush(ProxyProcess *p, int dir_fd);

/* The job ended: it is killed and reaped, what it reported last read and
 * written. */
void proxy_process_stop(ProxyProcess *p, int dir_fd);
void proxy_process_done(ProxyProcess *p);
