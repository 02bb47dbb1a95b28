/* SPDX-License-Identifier: MIT */
#pragma once

/* UTF-8 as RFC 3629 has it (no overlong forms, surrogates or code points
 * past U+10FFFF), the one scanner of bgrun's: for cutting text at a
 * character's end, and for making bytes a job wrote valid for JSON. */

#include <stddef.h>

/* The length of the longest prefix of s, at most max bytes (or up to a
 * NUL), that does not end inside a UTF-8 sequence: cutting there never
 * splits a character. A byte that starts no valid sequence counts as one;
 * a valid sequence's start cut by max is left out (the rest may follow). */
size_t utf8_prefix_len(const char *s, size_t max);

/* A copy of that prefix (NULL on out of memory). */
char *utf8_strndup(const char *s, size_t max);

/* A NUL-terminated copy of the n bytes at p made valid: valid UTF-8 as it
 * is, U+FFFD for each byte that starts no valid sequence (a NUL byte stays,
 * so the length is *ret_len); NULL on out of memory. */
char *utf8_make_valid(const void *p, size_t n, size_t *ret_len);
