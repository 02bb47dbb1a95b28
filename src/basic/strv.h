/* SPDX-License-Identifier: MIT */
#pragma once

/* NULL-terminated lists of strings ("strv", as systemd calls them). */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

size_t strv_length(char *const *l);

/* Whether a and b hold the same strings in the same order (NULL: empty). */
bool strv_equal(char *const *a, char *const *b);

/* A copy of l, its strings copied too (NULL for NULL, and on failure). */
char **strv_copy(char *const *l);

/* Free every string, then the list; NULL is fine. Returns NULL, so that
 * l = strv_free(l) leaves nothing dangling. */
char **strv_free(char **l);
static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* Append value (not copied, not taken) to *l, a list of *n entries that is
 * NULL or was grown here (or holds exactly the next power of two of *n + 1
 * slots, as an empty list of one slot does). It grows by doubling, so
 * appending n entries one at a time reallocates about log2(n) times. On
 * failure -ENOMEM and *l and *n are unchanged. */
int strv_push(char ***l, size_t *n, char *value);

/* The same, taking value: freed on failure. A NULL value is -ENOMEM, so
 * strv_consume(&l, &n, strdup(s)) needs no check of its own. */
int strv_consume(char ***l, size_t *n, char *value);
