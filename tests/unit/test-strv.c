/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <stdio.h>

#include "strv.h"

Test(strv, length_counts_to_the_null_and_null_is_empty) {
        char a[] = "a", b[] = "b";
        char *l[] = { a, b, NULL }, *empty[] = { NULL };
        cr_assert_eq(strv_length(l), 2);
        cr_assert_eq(strv_length(empty), 0);
        cr_assert_eq(strv_length(NULL), 0);
}

Test(strv, push_appends_in_order_and_keeps_the_list_terminated) {
        char *words[] = { (char *) "zero", (char *) "one", (char *) "two", (char *) "three", (char *) "four" };
        char **l = NULL;
        size_t n = 0;
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                cr_assert_eq(strv_push(&l, &n, words[i]), 0);
                cr_assert_eq(n, i + 1);
                cr_assert_eq(strv_length(l), n);
                for (size_t k = 0; k <= i; k++)
                        cr_assert_eq(l[k], words[k], "not copied");
        }
        free(l); /* the strings are not the list's */
}

Test(strv, push_starts_from_an_empty_list_of_one_slot) {
        char **l = calloc(1, sizeof(char *));
        cr_assert_not_null(l);
        size_t n = 0;
        cr_assert_eq(strv_consume(&l, &n, strdup("x")), 0);
        cr_assert_str_eq(l[0], "x");
        cr_assert_null(l[1]);
        strv_free(l);
}

/* Many appends: each entry where it was put (under ASan, any write past
 * what was allocated is a report). */
Test(strv, consume_grows_to_many_entries) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        for (int i = 0; i < 1000; i++) {
                char *s = NULL;
                cr_assert_geq(asprintf(&s, "%d", i), 0);
                cr_assert_eq(strv_consume(&l, &n, s), 0);
        }
        cr_assert_eq(n, 1000);
        cr_assert_eq(strv_length(l), 1000);
        for (int i = 0; i < 1000; i++)
                cr_assert_eq(atoi(l[i]), i);
}

Test(strv, consume_of_null_is_out_of_memory_and_changes_nothing) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        cr_assert_eq(strv_consume(&l, &n, strdup("a")), 0);
        cr_assert_eq(strv_consume(&l, &n, NULL), -ENOMEM);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(l[0], "a");
        cr_assert_null(l[1]);
}

/* NULL is an empty list to free; freeing answers NULL, to store over the
 * freed pointer (LeakSanitizer, in tools/test --sanitize, checks the list
 * and its strings are gone). */
Test(strv, free_takes_null_and_answers_null) {
        cr_assert_null(strv_free(NULL));
        char **l = NULL;
        size_t n = 0;
        cr_assert_eq(strv_push(&l, &n, strdup("a")), 0);
        cr_assert_eq(strv_push(&l, &n, strdup("b")), 0);
        cr_assert_not_null(l);
        l = strv_free(l);
        cr_assert_null(l);
}
