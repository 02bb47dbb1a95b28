/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* What the lead byte c starts: its length (0: no valid sequence) and the
 * range of the byte after it (RFC 3629's table; later ones are 80..BF). */
static size_t lead(uint8_t c, uint8_t *ret_lo, uint8_t *ret_hi) {
        *ret_lo = 0x80;
        *ret_hi = 0xBF;
        if (c < 0x80)
                return 1;
        if (c >= 0xC2 && c <= 0xDF)
                return 2;
        if (c >= 0xE0 && c <= 0xEF) {
                if (c == 0xE0)
                        *ret_lo = 0xA0;
                else if (c == 0xED)
                        *ret_hi = 0x9F;
                return 3;
        }
        if (c >= 0xF0 && c <= 0xF4) {
                if (c == 0xF0)
                        *ret_lo = 0x90;
                else if (c == 0xF4)
                        *ret_hi = 0x8F;
                return 4;
        }
        return 0;
}

/* How many of the n bytes at s (n >= 1) continue the sequence s[0] starts
 * as they must, counting s[0]; *ret_len is the sequence's length (0: none
 * starts there). The sequence is whole and valid when both are equal. */
static size_t scan(const uint8_t *s, size_t n, size_t *ret_len) {
        uint8_t lo, hi;
        size_t len = lead(s[0], &lo, &hi), k = 1;

        *ret_len = len;
        if (len <= 1)
                return len;
        for (; k < len && k < n; k++) {
                if (s[k] < lo || s[k] > hi)
                        break;
                lo = 0x80;
                hi = 0xBF;
        }
        return k;
}

size_t utf8_prefix_len(const char *s, size_t max) {
        const uint8_t *u = (const uint8_t *) s;
        size_t i = 0;

        /* Nothing at or past max is read: s need not be terminated there. */
        while (i < max && u[i]) {
                size_t len, k = scan(u + i, max - i, &len);
                if (len > 1 && k == max - i && k < len)
                        break; /* a valid start cut at max: the rest may follow */
                i += len > 1 && k == len ? len : 1;
        }
        return i;
}

char *utf8_strndup(const char *s, size_t max) {
        return strndup(s, utf8_prefix_len(s, max));
}

char *utf8_make_valid(const void *p, size_t n, size_t *ret_len) {
        static const char replacement[] = "\xEF\xBF\xBD";
        const uint8_t *s = p;
        char *out, *o;

        /* At most 3 bytes for each byte in. */
        if (n > (SIZE_MAX - 1) / 3)
                return NULL;
        out = o = malloc(3 * n + 1);
        if (!out)
                return NULL;

        for (size_t i = 0; i < n;) {
                size_t len, k = scan(s + i, n - i, &len);

                if (len == 0 || k < len) {
                        memcpy(o, replacement, 3);
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(o, s + i, len);
                o += len;
                i += len;
        }
        *o = '\0';
        *ret_len = (size_t) (o - out);
        return out;
}
