/* SPDX-License-Identifier: MIT */
#pragma once

/* SipHash-2-4 (Aumasson and Bernstein), fed in pieces: a keyed hash, so
 * that keys a caller chooses (RequestIds, bus names) cannot be picked to
 * collide without the key, which bgrund draws at random (map.c). */

#include <stddef.h>
#include <stdint.h>

typedef struct SipHash {
        uint64_t v0, v1, v2, v3;
        uint64_t tail;  /* the bytes of an unfinished 8-byte word, little-endian */
        uint64_t len;   /* bytes fed so far */
} SipHash;

void siphash24_init(SipHash *s, const uint8_t key[static 16]);
void siphash24_feed(SipHash *s, const void *p, size_t n);
uint64_t siphash24_finish(SipHash *s);
