/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "listen-framing.h"
#include "macro.h"

/* The only line that ends the authentication (sd-bus's server reads the
 * others; a server never sees a line it could be made to keep). */
static const char begin_line[] = "BEGIN\r\n";
#define BEGIN_LINE_LEN (sizeof begin_line - 1)

void listen_framing_init(ListenFraming *f, uint64_t message_max) {
        assert(f);
        *f = (ListenFraming) { .message_max = message_max };
}

static uint32_t read_u32(const uint8_t *p, bool little_endian) {
        return little_endian ? (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24
                             : (uint32_t) p[3] | (uint32_t) p[2] << 8 | (uint32_t) p[1] << 16 | (uint32_t) p[0] << 24;
}

/* A whole header: byte order, version, and the size it declares. The
 * sizes are 32 bits each and summed in 64, so no length wraps to a small
 * one. */
static ListenFramingRefusal header_check(ListenFraming *f) {
        const uint8_t *h = f->header;
        bool le = h[0] == 'l';
        if ((!le && h[0] != 'B') || h[3] != 1)
                return LISTEN_FRAMING_NOT_A_MESSAGE;
        uint64_t body = read_u32(h + 4, le), fields = read_u32(h + 12, le);
        /* The fields array starts 8-aligned and the body starts at the next
         * multiple of 8 after it. */
        uint64_t total = LISTEN_FRAMING_HEADER_SIZE + ((fields + 7) & ~(uint64_t) 7) + body;
        if (total > f->message_max)
                return LISTEN_FRAMING_MESSAGE_TOO_LARGE;
        f->remaining = total - LISTEN_FRAMING_HEADER_SIZE;
        return LISTEN_FRAMING_OK;
}

static ListenFramingRefusal feed(ListenFraming *f, const uint8_t *p, size_t n, size_t *pass) {
        for (size_t i = 0; i < n;) {
                if (!f->got_nul) {
                        if (p[i++] != 0)
                                return LISTEN_FRAMING_NO_NUL;
                        f->got_nul = true;
                } else if (!f->authenticated) {
                        if (f->line_len >= LISTEN_FRAMING_LINE_MAX)
                                return LISTEN_FRAMING_LINE_TOO_LONG;
                        uint8_t b = p[i++];
                        if (f->begin_len == f->line_len && f->begin_len < BEGIN_LINE_LEN &&
                            b == (uint8_t) begin_line[f->begin_len])
                                f->begin_len++;
                        f->line_len++;
                        if (b != '\n')
                                continue;
                        /* '\n' ends "BEGIN\r\n" too: a line of its length
                         * that matched all along is that line. */
                        if (f->line_len == BEGIN_LINE_LEN && f->begin_len == BEGIN_LINE_LEN) {
                                f->authenticated = true;
                                *pass = i;
                        }
                        f->line_len = f->begin_len = 0;
                } else if (f->remaining > 0) {
                        size_t k = (size_t) MIN(f->remaining, (uint64_t) (n - i));
                        f->remaining -= k;
                        i += k;
                } else {
                        size_t k = MIN(LISTEN_FRAMING_HEADER_SIZE - f->header_len, n - i);
                        memcpy(f->header + f->header_len, p + i, k);
                        f->header_len += k;
                        i += k;
                        if (f->header_len < LISTEN_FRAMING_HEADER_SIZE)
                                continue;
                        f->header_len = 0;
                        ListenFramingRefusal r = header_check(f);
                        if (r != LISTEN_FRAMING_OK)
                                return r;
                }
        }
        return LISTEN_FRAMING_OK;
}

int listen_framing_feed(ListenFraming *f, const uint8_t *p, size_t n, size_t *ret_pass) {
        assert(f);
        assert(p || n == 0);

        if (f->refusal != LISTEN_FRAMING_OK)
                return -EBADMSG;
        size_t pass = n;
        f->refusal = feed(f, p, n, &pass);
        if (f->refusal != LISTEN_FRAMING_OK)
                return -EBADMSG;
        if (ret_pass)
                *ret_pass = pass;
        return 0;
}

static const char *const refusal_table[_LISTEN_FRAMING_REFUSAL_MAX] = {
        [LISTEN_FRAMING_OK] = "framed well",
        [LISTEN_FRAMING_NO_NUL] = "no NUL byte first",
        [LISTEN_FRAMING_LINE_TOO_LONG] = "authentication line too long",
        [LISTEN_FRAMING_NOT_A_MESSAGE] = "not a D-Bus message",
        [LISTEN_FRAMING_MESSAGE_TOO_LARGE] = "message larger than the most a client may send",
};

const char *listen_framing_refusal_to_string(ListenFramingRefusal r) {
        if ((unsigned) r >= _LISTEN_FRAMING_REFUSAL_MAX)
                return NULL;
        return refusal_table[r];
}
