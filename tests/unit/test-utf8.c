/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* A buffer of exactly n bytes on the heap, no terminating NUL: AddressSanitizer
 * catches a read past it. */
static char *exact(const char *s, size_t n) {
        char *p = malloc(n);
        cr_assert_not_null(p);
        memcpy(p, s, n);
        return p;
}

Test(utf8, prefix_of_bytes_without_a_nul_reads_nothing_past_max) {
        char *p = exact("one\n", 4);
        cr_assert_eq(utf8_prefix_len(p, 4), 4);
        free(p);
        /* A sequence cut at the end is left out: the rest may follow. */
        p = exact("a\xc3", 2);
        cr_assert_eq(utf8_prefix_len(p, 2), 1);
        free(p);
        p = exact("a\xe2\x82", 3);
        cr_assert_eq(utf8_prefix_len(p, 3), 1);
        free(p);
}

Test(utf8, prefix_keeps_whole_characters_and_counts_bad_bytes_as_one) {
        cr_assert_eq(utf8_prefix_len("a\xc3\xa9z", 2), 1);  /* é would be cut */
        cr_assert_eq(utf8_prefix_len("a\xc3\xa9z", 3), 3);
        cr_assert_eq(utf8_prefix_len("a\xffz", 3), 3);      /* a byte that is no UTF-8 */
        cr_assert_eq(utf8_prefix_len("a\xc3z", 3), 3);      /* a lead byte with no continuation */
        cr_assert_eq(utf8_prefix_len("ab", 10), 2);         /* the string's end first */
}

/* One scanner for both uses: what utf8_make_valid() replaces is what
 * utf8_prefix_len() counts byte by byte. */
Test(utf8, one_scanner_for_cutting_and_making_valid) {
        /* A surrogate (ED A0 80) and an overlong form (E0 80 80) are no
         * characters: three bytes each, cut anywhere. */
        cr_assert_eq(utf8_prefix_len("\xed\xa0\x80", 2), 2);
        cr_assert_eq(utf8_prefix_len("\xe0\x80\x80", 2), 2);
        /* A valid start cut at max is left out, an emoji whole is kept. */
        cr_assert_eq(utf8_prefix_len("\xf0\x9f\x98\x80", 3), 0);
        cr_assert_eq(utf8_prefix_len("\xf0\x9f\x98\x80", 4), 4);

        size_t n;
        char *s = utf8_make_valid("\xed\xa0\x80" "a\xf0\x9f\x98\x80", 8, &n);
        cr_assert_not_null(s);
        cr_assert_eq(n, 3 * 3 + 1 + 4);
        cr_assert_str_eq(s, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "a\xf0\x9f\x98\x80");
        free(s);
}
