/* SPDX-License-Identifier: MIT */
#pragma once

/* A job of a session's network joins a running member's namespace
 * (core/session-network.h): the first member its record names whose
 * namespace is verified to be what a bgrun job of the same user made for
 * it. */

#include <stdbool.h>
#include <sys/types.h>

typedef struct NetworkJoin {
        int netns_fd;  /* the member's network namespace */
        int userns_fd; /* an unprivileged bgrund's job: the user namespace that owns it; else -EBADF */
} NetworkJoin;

/* The namespaces to join from dir_fd's network-peers: 1 with *ret filled,
 * 0 when no member can be joined (the job makes the namespace: *ret holds
 * -EBADF), or -errno. */
int network_join_open(int dir_fd, bool user_namespace, uid_t uid, NetworkJoin *ret);
void network_join_done(NetworkJoin *j);
