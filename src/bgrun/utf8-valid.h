/* SPDX-License-Identifier: MIT */
#pragma once

/* Text for JSON from bytes a job wrote: valid UTF-8 as it is, anything else
 * replaced by U+FFFD, one for each byte that starts no valid sequence. */

#include <stddef.h>

/* A NUL-terminated copy of the n bytes at p made valid (a NUL byte stays,
 * so the length is *ret_len); NULL on out of memory. */
char *utf8_make_valid(const void *p, size_t n, size_t *ret_len);
