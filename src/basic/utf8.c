/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* The length of the sequence a lead byte starts, 1 for anything else. */
static size_t sequence_len(unsigned char c) {
        if (c >= 0xf0 && c <= 0xf4)
                return 4;
        if (c >= 0xe0)
                return c <= 0xef ? 3 : 1;
        if (c >= 0xc2)
                return 2;
        return 1;
}

size_t utf8_prefix_len(const char *s, size_t max) {
        size_t i = 0;
        /* Nothing at or past max is read: s need not be terminated there. */
        while (i < max && s[i]) {
                size_t n = sequence_len((unsigned char) s[i]), k = 1;
                /* A lead byte counts with its continuation bytes only when
                 * they are all there. */
                while (k < n && i + k < max && ((unsigned char) s[i + k] & 0xc0) == 0x80)
                        k++;
                if (k < n && i + k == max)
                        break; /* cut at max: the rest may follow */
                if (k < n)
                        n = 1;
                i += n;
        }
        return i;
}

char *utf8_strndup(const char *s, size_t max) {
        return strndup(s, utf8_prefix_len(s, max));
}
