/* SPDX-License-Identifier: MIT */
/* Bytes made valid UTF-8, for JSON. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8-valid.h"

/* The length of the valid sequence at s (n bytes left), 0 if none starts
 * there. Overlong forms, surrogates and code points past U+10FFFF are not
 * valid (RFC 3629). */
static size_t valid_sequence(const uint8_t *s, size_t n) {
        uint8_t lo = 0x80, hi = 0xBF;
        size_t len;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xC2 && s[0] <= 0xDF)
                len = 2;
        else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
                len = 3;
                if (s[0] == 0xE0)
                        lo = 0xA0;
                else if (s[0] == 0xED)
                        hi = 0x9F;
        } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
                len = 4;
                if (s[0] == 0xF0)
                        lo = 0x90;
                else if (s[0] == 0xF4)
                        hi = 0x8F;
        } else
                return 0;

        if (n < len)
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
        return len;
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
                size_t k = valid_sequence(s + i, n - i);

                if (k == 0) {
                        memcpy(o, replacement, 3);
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(o, s + i, k);
                o += k;
                i += k;
        }
        *o = '\0';
        *ret_len = (size_t) (o - out);
        return out;
}
