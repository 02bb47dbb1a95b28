/* SPDX-License-Identifier: MIT */
/* listen_framing_feed(): the framing of what any local user sends bgrund
 * --listen, followed before sd-bus sees a byte of it.
 *
 * Input: a byte L for the limit (0: bgrund's 4 MiB, else L * 8 bytes, so
 * that small messages reach it), two bytes (little endian) for a cut,
 * then the client's stream.
 *
 * The stream is fed whole, in two chunks cut at the cut (modulo its length
 * plus one), and a byte at a time; each must end in the same verdict, the
 * same reason, the same state and the same place where BEGIN ended (what may
 * go on at once). The whole feed is also checked against a model that reads
 * the stream by random access, as a reader of a finished buffer would: the
 * NUL, lines found with memchr up to "BEGIN\r\n", then one message after
 * another by its declared size. A refused stream stays refused, its state
 * untouched. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "listen-framing.h"

/* BUS_LISTEN_MESSAGE_MAX (listen-limits.h). */
#define MESSAGE_MAX_BGRUND (4U * 1024U * 1024U)

typedef struct Outcome {
        ListenFramingRefusal refusal;
        bool authenticated;
        uint64_t begin_end;     /* where in the stream BEGIN ended, when authenticated */
        /* What is left unfinished at the end, when not refused. */
        uint64_t line_len, header_len, remaining;
} Outcome;

static void check_same(const Outcome *a, const Outcome *b, const char *how) {
        FUZZ_CHECK(a->refusal == b->refusal, "%s: refusal %d, whole %d", how, b->refusal, a->refusal);
        if (a->refusal != LISTEN_FRAMING_OK)
                return;
        FUZZ_CHECK(a->authenticated == b->authenticated, "%s: authenticated %d, whole %d", how,
                   b->authenticated, a->authenticated);
        FUZZ_CHECK(a->begin_end == b->begin_end, "%s: BEGIN ends at %llu, whole %llu", how,
                   (unsigned long long) b->begin_end, (unsigned long long) a->begin_end);
        FUZZ_CHECK(a->line_len == b->line_len && a->header_len == b->header_len && a->remaining == b->remaining,
                   "%s: line %llu header %llu remaining %llu, whole %llu %llu %llu", how,
                   (unsigned long long) b->line_len, (unsigned long long) b->header_len,
                   (unsigned long long) b->remaining, (unsigned long long) a->line_len,
                   (unsigned long long) a->header_len, (unsigned long long) a->remaining);
}

/* Feeds the stream in chunks of chunk bytes (the last one shorter), the
 * first one first bytes long unless that is SIZE_MAX; checks what each call
 * says of its own chunk. */
static Outcome feed_chunks(const uint8_t *p, size_t n, uint64_t max, size_t first, size_t chunk) {
        ListenFraming f;
        listen_framing_init(&f, max);
        Outcome o = {};
        for (size_t at = 0, calls = 0;; calls++) {
                size_t k = calls == 0 && first != SIZE_MAX ? first : chunk;
                if (k > n - at)
                        k = n - at;
                bool was_authenticated = f.authenticated;
                size_t pass = SIZE_MAX;
                int r = listen_framing_feed(&f, p + at, k, &pass);
                if (r < 0) {
                        FUZZ_CHECK(r == -EBADMSG, "listen_framing_feed: %d", r);
                        FUZZ_CHECK(f.refusal > LISTEN_FRAMING_OK && f.refusal < _LISTEN_FRAMING_REFUSAL_MAX,
                                   "refused for no reason: %d", f.refusal);
                        FUZZ_CHECK(pass == SIZE_MAX, "a refusal wrote what may pass");
                        o.refusal = f.refusal;

                        /* Refused for good: later bytes change nothing. */
                        ListenFraming before = f;
                        FUZZ_CHECK(listen_framing_feed(&f, (const uint8_t *) "\0BEGIN\r\n", 8, &pass) == -EBADMSG,
                                   "a refused stream took more");
                        FUZZ_CHECK(f.refusal == before.refusal && f.authenticated == before.authenticated &&
                                           f.line_len == before.line_len && f.header_len == before.header_len &&
                                           f.remaining == before.remaining,
                                   "a refused stream changed");
                        return o;
                }
                FUZZ_CHECK(r == 0, "listen_framing_feed: %d", r);
                FUZZ_CHECK(f.refusal == LISTEN_FRAMING_OK, "success with a refusal %d", f.refusal);
                if (!was_authenticated && f.authenticated) {
                        FUZZ_CHECK(pass >= 1 && pass <= k && at + pass >= 8, "BEGIN ends at %zu of %zu at %zu",
                                   pass, k, at);
                        FUZZ_CHECK(memcmp(p + at + pass - 7, "BEGIN\r\n", 7) == 0, "pass %zu is not past BEGIN",
                                   pass);
                        o.begin_end = at + pass;
                } else
                        FUZZ_CHECK(pass == k, "%zu of %zu may pass, no BEGIN in them", pass, k);
                FUZZ_CHECK(f.line_len <= LISTEN_FRAMING_LINE_MAX, "line of %u", (unsigned) f.line_len);
                FUZZ_CHECK(f.header_len < LISTEN_FRAMING_HEADER_SIZE, "header of %u", (unsigned) f.header_len);
                FUZZ_CHECK(f.remaining + LISTEN_FRAMING_HEADER_SIZE <= max || f.remaining == 0,
                           "%llu bytes of a message past the limit", (unsigned long long) f.remaining);
                at += k;
                if (at >= n)
                        break;
        }
        o.authenticated = f.authenticated;
        o.line_len = f.line_len;
        o.header_len = f.header_len;
        o.remaining = f.remaining;
        return o;
}

static uint32_t u32_at(const uint8_t *p, bool little_endian) {
        uint32_t v = 0;
        for (unsigned i = 0; i < 4; i++)
                v = v << 8 | p[little_endian ? 3 - i : i];
        return v;
}

static Outcome model(const uint8_t *p, size_t n, uint64_t max) {
        Outcome o = {};
        if (n == 0)
                return o;
        if (p[0] != 0)
                return (Outcome) { .refusal = LISTEN_FRAMING_NO_NUL };
        size_t i = 1;
        for (;;) {
                size_t left = n - i;
                const uint8_t *nl = memchr(p + i, '\n', left < LISTEN_FRAMING_LINE_MAX ? left : LISTEN_FRAMING_LINE_MAX);
                if (!nl) {
                        if (left > LISTEN_FRAMING_LINE_MAX)
                                return (Outcome) { .refusal = LISTEN_FRAMING_LINE_TOO_LONG };
                        o.line_len = left;
                        return o;
                }
                size_t len = (size_t) (nl - (p + i)) + 1;
                bool begin = len == 7 && memcmp(p + i, "BEGIN\r\n", 7) == 0;
                i += len;
                if (begin)
                        break;
        }
        o.authenticated = true;
        o.begin_end = i;
        while (n - i >= LISTEN_FRAMING_HEADER_SIZE) {
                const uint8_t *h = p + i;
                if ((h[0] != 'l' && h[0] != 'B') || h[3] != 1)
                        return (Outcome) { .refusal = LISTEN_FRAMING_NOT_A_MESSAGE };
                bool le = h[0] == 'l';
                uint64_t fields = u32_at(h + 12, le), body = u32_at(h + 4, le);
                uint64_t size = LISTEN_FRAMING_HEADER_SIZE + (fields + 7) / 8 * 8 + body;
                if (size > max)
                        return (Outcome) { .refusal = LISTEN_FRAMING_MESSAGE_TOO_LARGE };
                if (size > n - i) {
                        o.remaining = size - (n - i);
                        return o;
                }
                i += size;
        }
        o.header_len = n - i;
        return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 3)
                return 0;
        uint64_t max = data[0] == 0 ? MESSAGE_MAX_BGRUND : (uint64_t) data[0] * 8;
        size_t cut = (size_t) (data[1] | data[2] << 8);
        const uint8_t *p = data + 3;
        size_t n = size - 3;
        cut %= n + 1;

        Outcome whole = feed_chunks(p, n, max, SIZE_MAX, n);
        Outcome expected = model(p, n, max);
        check_same(&whole, &expected, "the model");

        /* Cut in two (either may be empty: an empty chunk changes nothing). */
        Outcome two = feed_chunks(p, n, max, cut, n);
        check_same(&whole, &two, "in two");
        Outcome bytes = feed_chunks(p, n, max, SIZE_MAX, 1);
        check_same(&whole, &bytes, "a byte at a time");

        const char *why = listen_framing_refusal_to_string(whole.refusal);
        FUZZ_CHECK(why && why[0], "no words for refusal %d", whole.refusal);
        return 0;
}
