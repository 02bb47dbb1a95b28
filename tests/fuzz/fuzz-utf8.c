/* SPDX-License-Identifier: MIT */
/* utf8_prefix_len() and utf8_strndup(), used to cut caller-supplied text
 * (commands, reasons) to a size.
 *
 * Input: two bytes of max (little endian; 0xffff means SIZE_MAX), then the
 * string. Checked: the prefix is at most max and at most the string, it is a
 * prefix of the string (utf8_strndup copies exactly it), it never ends inside
 * a valid (RFC 3629) UTF-8 sequence, it gives up at most three bytes of what
 * fits, and a valid UTF-8 string stays valid when cut. */
#include <stdbool.h>
#include <stdint.h>

#include "fuzz.h"
#include "utf8.h"

/* The length of the valid UTF-8 sequence starting at s, or 0 if none does
 * (Unicode Table 3-7: no overlong forms, no surrogates, nothing past
 * U+10FFFF). ASCII other than NUL is a sequence of 1. */
static size_t valid_sequence(const unsigned char *s) {
        unsigned char c = s[0];
        if (c == 0)
                return 0;
        if (c < 0x80)
                return 1;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2;
        else if (c >= 0xe0 && c <= 0xef) {
                n = 3;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
        } else
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return n;
}

static bool valid_utf8(const unsigned char *s, size_t len) {
        for (size_t i = 0; i < len;) {
                size_t n = valid_sequence(s + i);
                if (n == 0 || i + n > len)
                        return false;
                i += n;
        }
        return true;
}

static void check(const char *s, size_t max) {
        const unsigned char *u = (const unsigned char *) s;
        size_t len = strlen(s);
        size_t n = utf8_prefix_len(s, max);

        FUZZ_CHECK(n <= max, "%zu > max %zu", n, max);
        FUZZ_CHECK(n <= len, "%zu > length %zu", n, len);
        size_t fits = max < len ? max : len;
        FUZZ_CHECK(n + 3 >= fits, "cut to %zu where %zu fit", n, fits);

        /* No valid sequence, wherever it starts, may be cut by n. */
        for (size_t i = 0; i < n; i++) {
                size_t k = valid_sequence(u + i);
                FUZZ_CHECK(!(k > 1 && i + k > n), "cut at %zu inside the sequence of %zu bytes at %zu (max %zu)", n,
                           k, i, max);
        }
        if (valid_utf8(u, len))
                FUZZ_CHECK(valid_utf8(u, n), "valid UTF-8 cut at %zu (max %zu) is not", n, max);

        char *d = utf8_strndup(s, max);
        FUZZ_CHECK(d, "utf8_strndup");
        FUZZ_CHECK(strlen(d) == n && memcmp(d, s, n) == 0, "utf8_strndup is not the prefix");
        free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 2)
                return 0;
        size_t max = data[0] | (size_t) data[1] << 8;
        if (max == 0xffff)
                max = SIZE_MAX;
        char *s = fuzz_strndup(data + 2, size - 2);
        check(s, max);
        /* And every max up to the length, where a cut must fall somewhere. */
        size_t len = strlen(s);
        for (size_t m = 0; m <= len && m < 64; m++)
                check(s, m);
        free(s);
        return 0;
}
