/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "macro.h"
#include "relay.h"

/* Taken from a socket a turn: a pipe's worth at the default capacity. */
#define RELAY_CHUNK (64 * 1024)

int relay_open(Relay *r) {
        if (relay_is_open(r))
                return 0;
        if (pipe2(r->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
                r->pipe[0] = r->pipe[1] = -EBADF;
                return negative_errno();
        }
        return 0;
}

ssize_t relay_in(Relay *r, int from) {
        if (r->held > 0)
                return -EAGAIN; /* one pipe's worth at a time */
        ssize_t n = splice(from, NULL, r->pipe[1], NULL, RELAY_CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : negative_errno();
        r->held += (size_t) n;
        return n;
}

ssize_t relay_out(Relay *r, int to) {
        if (r->held == 0)
                return -EAGAIN;
        ssize_t n = splice(r->pipe[0], NULL, to, NULL, r->held, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : negative_errno();
        r->held -= (size_t) n;
        return n;
}

void relay_done(Relay *r) {
        safe_close(r->pipe[0]);
        safe_close(r->pipe[1]);
        *r = RELAY_NULL;
}
