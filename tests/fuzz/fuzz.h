/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the libFuzzer targets in this folder (tools/fuzz builds and runs
 * them). A broken invariant prints what broke and aborts, which libFuzzer
 * records as a crash with the input that caused it. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                              \
        do {                                                                               \
                if (!(cond)) {                                                             \
                        fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, \
                                #cond);                                                    \
                        fprintf(stderr, __VA_ARGS__);                                      \
                        fputc('\n', stderr);                                               \
                        abort();                                                           \
                }                                                                          \
        } while (0)

/* The input as a C string: everything up to the first NUL (or all of it). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        if (!s)
                abort();
        memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

/* Whether a and b are both NULL or equal strings. */
static inline int fuzz_streq0(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
