/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* The length of the longest prefix of s, at most max bytes, that does not
 * end inside a UTF-8 sequence: cutting there never splits a character
 * (bytes that are not valid UTF-8 count as one character each). */
size_t utf8_prefix_len(const char *s, size_t max);

/* A copy of that prefix (NULL on out of memory). */
char *utf8_strndup(const char *s, size_t max);
