/* SPDX-License-Identifier: MIT */
#pragma once

/* Where a chunked request body ends, read as it streams through the proxy
 * (RFC 9112 7.1), so that what follows it is read as the next request,
 * never passed on unread. Bounded: a size of at most 15 hex digits, a
 * line (size and extensions, or a trailer field) of at most 4 KiB. Pure. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Chunked {
        int state;
        uint64_t left;  /* of the chunk's data */
        size_t line;    /* bytes of the current line */
        unsigned digits;
        bool trailer_empty; /* the trailer line read so far is empty */
} Chunked;

/* Feed buf[0..len): how many of its bytes are the body's (all, or up to
 * its end), and *ret_done once the body ended there; -1 for a body that
 * is not chunked as it must be. */
ssize_t chunked_feed(Chunked *c, const char *buf, size_t len, bool *ret_done);
