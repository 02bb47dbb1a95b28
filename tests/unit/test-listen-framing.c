/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "listen-framing.h"

#define MAX (4U * 1024U * 1024U) /* bgrund's BUS_LISTEN_MESSAGE_MAX */
#define AUTH "\0AUTH EXTERNAL 30\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n"
#define AUTH_LEN (sizeof AUTH - 1)

typedef struct Stream {
        uint8_t buf[8192];
        size_t n;
} Stream;

static void put(Stream *s, const void *p, size_t n) {
        cr_assert_leq(s->n + n, sizeof s->buf);
        memcpy(s->buf + s->n, p, n);
        s->n += n;
}

static void put_u32(Stream *s, uint32_t v, bool le) {
        uint8_t b[4];
        for (unsigned i = 0; i < 4; i++)
                b[le ? i : 3 - i] = (uint8_t) (v >> (8 * i));
        put(s, b, 4);
}

/* A message header declaring a fields array and a body of these sizes. */
static void put_header(Stream *s, bool le, uint32_t body, uint32_t fields) {
        put(s, le ? "l\1\0\1" : "B\1\0\1", 4);
        put_u32(s, body, le);
        put_u32(s, 1, le); /* serial */
        put_u32(s, fields, le);
}

/* A whole message: header, fields (padded to 8), body, of bytes that are
 * no header themselves. */
static void put_message(Stream *s, bool le, uint32_t body, uint32_t fields) {
        put_header(s, le, body, fields);
        size_t rest = ((fields + 7U) & ~7U) + body;
        cr_assert_leq(s->n + rest, sizeof s->buf);
        memset(s->buf + s->n, 'x', rest);
        s->n += rest;
}

typedef struct Outcome {
        int r;
        ListenFramingRefusal refusal;
        bool authenticated;
        size_t begin_end; /* where BEGIN ended in the stream, or 0 */
        size_t line_len, header_len;
        uint64_t remaining;
} Outcome;

/* Feeds s cut at each of cuts[] (ascending), checking what each call says. */
static Outcome feed_cut(const Stream *s, uint64_t max, const size_t *cuts, size_t n_cuts) {
        ListenFraming f;
        listen_framing_init(&f, max);
        Outcome o = {};
        size_t at = 0;
        for (size_t c = 0; c <= n_cuts; c++) {
                size_t end = c < n_cuts ? cuts[c] : s->n;
                bool was = f.authenticated;
                size_t pass = SIZE_MAX;
                o.r = listen_framing_feed(&f, s->buf + at, end - at, &pass);
                if (o.r < 0) {
                        cr_assert_eq(pass, SIZE_MAX, "a refusal says what may pass");
                        break;
                }
                if (!was && f.authenticated)
                        o.begin_end = at + pass;
                else
                        cr_assert_eq(pass, end - at, "%zu of %zu may pass with no BEGIN in them", pass, end - at);
                at = end;
        }
        o.refusal = f.refusal;
        o.authenticated = f.authenticated;
        o.line_len = f.line_len;
        o.header_len = f.header_len;
        o.remaining = f.remaining;
        return o;
}

static Outcome feed_whole(const Stream *s, uint64_t max) {
        return feed_cut(s, max, NULL, 0);
}

static void assert_same(const Outcome *a, const Outcome *b, const char *how, size_t where) {
        cr_assert_eq(a->r, b->r, "%s %zu: returns %d, whole %d", how, where, b->r, a->r);
        cr_assert_eq(a->refusal, b->refusal, "%s %zu: refusal %d, whole %d", how, where, b->refusal, a->refusal);
        if (a->r < 0)
                return;
        cr_assert_eq(a->authenticated, b->authenticated, "%s %zu", how, where);
        cr_assert_eq(a->begin_end, b->begin_end, "%s %zu: BEGIN ends at %zu, whole %zu", how, where, b->begin_end,
                     a->begin_end);
        cr_assert_eq(a->line_len, b->line_len, "%s %zu", how, where);
        cr_assert_eq(a->header_len, b->header_len, "%s %zu", how, where);
        cr_assert_eq(a->remaining, b->remaining, "%s %zu", how, where);
}

/* Cut once at every byte boundary, and at every one at once (a byte at a
 * time): the same as whole. */
static Outcome assert_cut_anywhere(const Stream *s, uint64_t max) {
        Outcome whole = feed_whole(s, max);
        for (size_t k = 0; k <= s->n; k++) {
                Outcome o = feed_cut(s, max, &k, 1);
                assert_same(&whole, &o, "cut at", k);
        }
        size_t *all = malloc((s->n + 1) * sizeof(size_t));
        cr_assert_not_null(all);
        for (size_t k = 0; k <= s->n; k++)
                all[k] = k;
        Outcome o = feed_cut(s, max, all, s->n + 1);
        assert_same(&whole, &o, "a byte at a time, length", s->n);
        free(all);
        return whole;
}

Test(listen_framing, little_endian_hello) {
        Stream s = {};
        put(&s, AUTH, AUTH_LEN);
        put_message(&s, true, 0, 109); /* Hello's size */
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert(o.authenticated);
        cr_assert_eq(o.begin_end, AUTH_LEN, "what follows BEGIN waits, BEGIN goes");
        cr_assert_eq(o.header_len, 0);
        cr_assert_eq(o.remaining, 0);
}

Test(listen_framing, big_endian_header) {
        Stream s = {};
        put(&s, AUTH, AUTH_LEN);
        put_header(&s, false, 5, 0x0102);
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        /* 0x102 fields padded to 0x108, then 5 of body: read big endian. */
        cr_assert_eq(o.remaining, 0x108 + 5);

        /* The same bytes read little endian would declare 0x02010000 of
         * fields: too large. */
        s.buf[AUTH_LEN] = 'l';
        Outcome le = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(le.r, -EBADMSG);
        cr_assert_eq(le.refusal, LISTEN_FRAMING_MESSAGE_TOO_LARGE);
}

Test(listen_framing, messages_follow_each_other) {
        Stream s = {};
        put(&s, AUTH, AUTH_LEN);
        put_message(&s, true, 4, 61);
        put_message(&s, false, 0, 0);
        put_message(&s, true, 100, 8);
        put_header(&s, true, 3, 0); /* then a message cut short */
        put(&s, "ab", 2);
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert_eq(o.remaining, 1);

        /* A byte that is no header where the next header starts. */
        put(&s, "cX", 2);
        o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert_eq(o.header_len, 1);
        put(&s, "\1\0\1" "000000000000", 15);
        o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.refusal, LISTEN_FRAMING_NOT_A_MESSAGE);
}

Test(listen_framing, begin_passes_what_precedes_it) {
        Stream s = {};
        put(&s, AUTH, AUTH_LEN);
        put_message(&s, true, 0, 16);
        ListenFraming f;
        listen_framing_init(&f, MAX);
        size_t pass = 0;
        cr_assert_eq(listen_framing_feed(&f, s.buf, s.n, &pass), 0);
        cr_assert_eq(pass, AUTH_LEN);
        /* Once past BEGIN, every byte may pass. */
        put_message(&s, true, 0, 16);
        cr_assert_eq(listen_framing_feed(&f, s.buf + AUTH_LEN + 32, 32, &pass), 0);
        cr_assert_eq(pass, 32);
        cr_assert_eq(listen_framing_feed(&f, s.buf, 0, NULL), 0, "no pass asked for");
}

Test(listen_framing, only_begin_ends_the_authentication) {
        static const char *const not_begin[] = {
                "BEGIN\n", "BEGIN \r\n", "XBEGIN\r\n", "BEGIN\r\r\n", "begin\r\n", "BEGINN\r\n", "BEGI\r\n", "\r\n",
                "BEGIN\r",
        };
        for (size_t i = 0; i < sizeof not_begin / sizeof not_begin[0]; i++) {
                Stream s = {};
                put(&s, "\0", 1);
                put(&s, not_begin[i], strlen(not_begin[i]));
                Outcome o = assert_cut_anywhere(&s, MAX);
                cr_assert_eq(o.r, 0, "%s", not_begin[i]);
                cr_assert(!o.authenticated, "'%s' ended the authentication", not_begin[i]);
                /* What follows is still a line, however it looks. */
                put(&s, "l\1\0\1", 4);
                o = assert_cut_anywhere(&s, MAX);
                cr_assert(!o.authenticated);
                cr_assert_gt(o.line_len, 0);
        }
        /* BEGIN after lines that began like it. */
        Stream s = {};
        put(&s, "\0BEGINX\r\nBEGIN\r\r\nBEGIN\r\n", 24);
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert(o.authenticated);
        cr_assert_eq(o.begin_end, 24);
}

Test(listen_framing, no_nul_first) {
        Stream s = {};
        put(&s, "AUTH EXTERNAL 30\r\nBEGIN\r\n", 25);
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, -EBADMSG);
        cr_assert_eq(o.refusal, LISTEN_FRAMING_NO_NUL);
        cr_assert(!o.authenticated);
}

Test(listen_framing, authentication_line_too_long) {
        /* A line of LISTEN_FRAMING_LINE_MAX bytes with its '\n' is fine. */
        Stream s = {};
        put(&s, "\0", 1);
        for (unsigned i = 0; i < LISTEN_FRAMING_LINE_MAX - 1; i++)
                put(&s, "A", 1);
        put(&s, "\n", 1);
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert_eq(o.line_len, 0);

        /* As many without one, too: the line may still end. */
        s.n--;
        put(&s, "A", 1);
        o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert_eq(o.line_len, LISTEN_FRAMING_LINE_MAX);

        /* One byte more, '\n' or not, is one too many. */
        put(&s, "\n", 1);
        o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, -EBADMSG);
        cr_assert_eq(o.refusal, LISTEN_FRAMING_LINE_TOO_LONG);

        /* The limit is per line, not for all of them. */
        Stream many = {};
        put(&many, "\0", 1);
        for (unsigned i = 0; i < 40; i++)
                put(&many, "AUTH EXTERNAL 30\r\n", 18);
        put(&many, "BEGIN\r\n", 7);
        o = assert_cut_anywhere(&many, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert(o.authenticated);
}

Test(listen_framing, message_at_and_over_the_limit) {
        Stream s = {};
        put(&s, AUTH, AUTH_LEN);
        /* 16 + 8 (1 padded) + body = MAX exactly. */
        put_header(&s, true, MAX - 24, 1);
        Outcome o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, 0);
        cr_assert_eq(o.remaining, MAX - 16);

        /* One more byte of fields pads to 16: 8 over. */
        s.n = AUTH_LEN;
        put_header(&s, true, MAX - 24, 9);
        o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.r, -EBADMSG);
        cr_assert_eq(o.refusal, LISTEN_FRAMING_MESSAGE_TOO_LARGE);

        s.n = AUTH_LEN;
        put_header(&s, false, MAX - 15, 0);
        o = assert_cut_anywhere(&s, MAX);
        cr_assert_eq(o.refusal, LISTEN_FRAMING_MESSAGE_TOO_LARGE);

        /* The limit is the caller's. */
        s.n = AUTH_LEN;
        put_message(&s, true, 8, 8);
        cr_assert_eq(assert_cut_anywhere(&s, 32).r, 0);
        cr_assert_eq(assert_cut_anywhere(&s, 31).refusal, LISTEN_FRAMING_MESSAGE_TOO_LARGE);
}

Test(listen_framing, sizes_that_would_wrap_are_too_large) {
        /* In 32 bits, 0xffffffff + 7 rounded down to 8 is 0, and 16 +
         * 0xfffffff0 + 0x20 is 0x10: a small message to a reader that
         * summed in 32 bits. */
        static const struct {
                uint32_t body, fields;
        } sizes[] = {
                { 0, 0xffffffffU },
                { 0, 0xfffffff9U },
                { 0xffffffffU, 0 },
                { 0x20, 0xfffffff0U },
                { 0xffffffffU, 0xffffffffU },
        };
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
                for (int le = 0; le <= 1; le++) {
                        Stream s = {};
                        put(&s, AUTH, AUTH_LEN);
                        put_header(&s, le, sizes[i].body, sizes[i].fields);
                        Outcome o = assert_cut_anywhere(&s, MAX);
                        cr_assert_eq(o.refusal, LISTEN_FRAMING_MESSAGE_TOO_LARGE, "body %#x fields %#x",
                                     sizes[i].body, sizes[i].fields);
                        /* Even with no limit to speak of, nothing wraps. */
                        ListenFraming f;
                        listen_framing_init(&f, UINT64_MAX);
                        cr_assert_eq(listen_framing_feed(&f, s.buf, s.n, NULL), 0);
                        cr_assert_eq(f.remaining, (((uint64_t) sizes[i].fields + 7) & ~(uint64_t) 7) + sizes[i].body);
                }
}

Test(listen_framing, not_a_message) {
        static const char *const headers[] = { "L\1\0\1", "b\1\0\1", "\0\1\0\1", "l\1\0\0", "B\1\0\2" };
        for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
                Stream s = {};
                put(&s, AUTH, AUTH_LEN);
                put(&s, headers[i], 4);
                put(&s, "\0\0\0\0\1\0\0\0\0\0\0\0", 12);
                Outcome o = assert_cut_anywhere(&s, MAX);
                cr_assert_eq(o.r, -EBADMSG, "header %zu", i);
                cr_assert_eq(o.refusal, LISTEN_FRAMING_NOT_A_MESSAGE, "header %zu", i);
        }
}

Test(listen_framing, a_refusal_is_for_good) {
        ListenFraming f;
        listen_framing_init(&f, MAX);
        cr_assert_eq(listen_framing_feed(&f, (const uint8_t *) "x", 1, NULL), -EBADMSG);
        cr_assert_eq(f.refusal, LISTEN_FRAMING_NO_NUL);
        size_t pass = 7;
        cr_assert_eq(listen_framing_feed(&f, (const uint8_t *) AUTH, AUTH_LEN, &pass), -EBADMSG);
        cr_assert_eq(listen_framing_feed(&f, NULL, 0, &pass), -EBADMSG);
        cr_assert_eq(f.refusal, LISTEN_FRAMING_NO_NUL);
        cr_assert(!f.got_nul && !f.authenticated);
        cr_assert_eq(pass, 7);
}

Test(listen_framing, a_big_body_is_counted_not_kept) {
        /* A message of the largest size, its body fed in chunks: exactly
         * its bytes are skipped, and the next header is checked. */
        ListenFraming f;
        listen_framing_init(&f, MAX);
        Stream s = {};
        put(&s, AUTH, AUTH_LEN);
        put_header(&s, true, MAX - 16, 0);
        cr_assert_eq(listen_framing_feed(&f, s.buf, s.n, NULL), 0);
        static uint8_t chunk[65536];
        memset(chunk, 'l', sizeof chunk);
        for (uint64_t left = MAX - 16; left > 0;) {
                size_t k = left < sizeof chunk ? (size_t) left : sizeof chunk;
                cr_assert_eq(listen_framing_feed(&f, chunk, k, NULL), 0);
                left -= k;
                cr_assert_eq(f.remaining, left);
        }
        cr_assert_eq(listen_framing_feed(&f, (const uint8_t *) "X", 1, NULL), 0);
        cr_assert_eq(f.header_len, 1);
        cr_assert_eq(listen_framing_feed(&f, chunk, 15, NULL), -EBADMSG);
        cr_assert_eq(f.refusal, LISTEN_FRAMING_NOT_A_MESSAGE);
}

Test(listen_framing, every_refusal_has_words) {
        for (int r = 0; r < _LISTEN_FRAMING_REFUSAL_MAX; r++) {
                const char *a = listen_framing_refusal_to_string(r);
                cr_assert(a && a[0], "refusal %d", r);
                for (int q = 0; q < r; q++)
                        cr_assert_str_neq(a, listen_framing_refusal_to_string(q));
        }
        cr_assert_null(listen_framing_refusal_to_string(_LISTEN_FRAMING_REFUSAL_MAX));
        cr_assert_null(listen_framing_refusal_to_string(-1));
}
