/* SPDX-License-Identifier: MIT */
#pragma once

/* Bytes moved from one socket to another through a pipe with splice(2),
 * never copied through the proxy's memory: what a tunnel carries, and an
 * answer's body once its head is passed. The pipe holds what the reader
 * did not take yet, at most its capacity (the kernel's default, 64 KiB):
 * the same bound a connection's buffer has. Made when first used; a proxy
 * out of descriptors copies instead. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct Relay {
        int pipe[2];
        size_t held;    /* bytes in the pipe */
} Relay;

#define RELAY_NULL ((Relay) { .pipe = { -EBADF, -EBADF } })

/* Its pipe, if it has none yet: 0, or -errno (then it is not used). */
int relay_open(Relay *r);
static inline bool relay_is_open(const Relay *r) {
        return r->pipe[0] >= 0;
}
static inline bool relay_holds(const Relay *r) {
        return r->held > 0;
}
/* From the socket into the pipe, while it is empty: > 0 bytes moved, 0 at
 * the socket's EOF, -EAGAIN, -errno. */
ssize_t relay_in(Relay *r, int from);
/* From the pipe to the socket: > 0 bytes moved, -EAGAIN, -errno. */
ssize_t relay_out(Relay *r, int to);
void relay_done(Relay *r);
