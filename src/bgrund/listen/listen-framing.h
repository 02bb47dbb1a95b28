/* SPDX-License-Identifier: MIT */
#pragma once

/* The framing of what a bgrund --listen client sends, followed before sd-bus
 * sees any of it (bus-listen.c): a NUL, authentication lines (each at most
 * LISTEN_FRAMING_LINE_MAX bytes with its '\n') up to "BEGIN\r\n", then D-Bus
 * messages, each a 16-byte header and the fields and body it declares, no
 * larger than a limit. Pure: no socket, no bus, no allocation; the work is
 * linear in the bytes fed and the state is this struct, however the stream
 * is cut into chunks. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LISTEN_FRAMING_LINE_MAX 512U
#define LISTEN_FRAMING_HEADER_SIZE 16U

typedef enum ListenFramingRefusal {
        LISTEN_FRAMING_OK,
        LISTEN_FRAMING_NO_NUL,           /* the first byte is not the credentials NUL */
        LISTEN_FRAMING_LINE_TOO_LONG,    /* an authentication line past LISTEN_FRAMING_LINE_MAX */
        LISTEN_FRAMING_NOT_A_MESSAGE,    /* a header of no known byte order or version */
        LISTEN_FRAMING_MESSAGE_TOO_LARGE, /* a header that declares more than message_max */
        _LISTEN_FRAMING_REFUSAL_MAX,
} ListenFramingRefusal;

typedef struct ListenFraming {
        uint64_t message_max;           /* the largest message, header included */
        ListenFramingRefusal refusal;   /* once refused, always */
        bool got_nul;
        bool authenticated;             /* BEGIN seen: messages follow */
        uint16_t line_len;              /* of the authentication line so far */
        uint8_t begin_len;              /* its first bytes that are "BEGIN\r\n"'s */
        uint8_t header_len;
        uint8_t header[LISTEN_FRAMING_HEADER_SIZE];
        uint64_t remaining;             /* of the message whose header was read */
} ListenFraming;

void listen_framing_init(ListenFraming *f, uint64_t message_max);

/* Follows the next n bytes p of the stream, all of them. 0 if they may go
 * on: *ret_pass (if not NULL) says how many may go on at once, n, or, when
 * the authentication ends within them, those up to the end of BEGIN (what
 * follows is checked as well, but a server should take it only once it has
 * read BEGIN). -EBADMSG if the stream is refused: f->refusal says why, and
 * every later call returns the same without looking. */
int listen_framing_feed(ListenFraming *f, const uint8_t *p, size_t n, size_t *ret_pass);

const char *listen_framing_refusal_to_string(ListenFramingRefusal r);
