/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's HTTP(S) proxy (contract: "AllowedDomains"): it accepts on a
 * socket made inside the job's network namespace, and connects, outside
 * it, only to the names the job's list allows, at addresses it checked.
 * One event loop, no thread but the resolver's. */

#include <stdbool.h>
#include <stdint.h>

#include "connection.h"
#include "resolver.h"

/* Per job, at once: past it the proxy stops accepting (the job's own
 * clients wait in the listen backlog). */
#define PROXY_CONNECTIONS_MAX 256
/* The descriptors it asks for: six a connection, and its own. */
#define PROXY_NOFILE (6 * PROXY_CONNECTIONS_MAX + 64)
/* An idle connection (no byte either way) is closed after this, µs. */
#define PROXY_IDLE_USEC (300ULL * 1000000)
/* A head not complete, or an upstream not connected, after this, µs. */
#define PROXY_SETUP_USEC (30ULL * 1000000)

struct Proxy {
        int epoll_fd;
        int listen_fd;
        int report_fd;          /* refused hosts, a line each, to the supervisor; -EBADF: none */
        char **allowed;         /* the job's AllowedDomains */
        Resolver resolver;
        Connection *connections;
        unsigned n_connections;
        bool accepting;
        uint64_t now;           /* CLOCK_MONOTONIC µs, at each turn */
};

/* Serve until the listening socket fails; -errno. */
int proxy_run(Proxy *p);
