/* SPDX-License-Identifier: MIT */
/* Written from the SipHash paper ("SipHash: a fast short-input PRF", 2012):
 * c = 2 rounds a word, d = 4 at the end. */

#include "siphash24.h"

static uint64_t rotl(uint64_t x, unsigned b) {
        return (x << b) | (x >> (64 - b));
}

static uint64_t load_le64(const uint8_t *p) {
        uint64_t v = 0;
        for (unsigned i = 0; i < 8; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

static void sip_round(SipHash *s) {
        s->v0 += s->v1;
        s->v1 = rotl(s->v1, 13);
        s->v1 ^= s->v0;
        s->v0 = rotl(s->v0, 32);
        s->v2 += s->v3;
        s->v3 = rotl(s->v3, 16);
        s->v3 ^= s->v2;
        s->v0 += s->v3;
        s->v3 = rotl(s->v3, 21);
        s->v3 ^= s->v0;
        s->v2 += s->v1;
        s->v1 = rotl(s->v1, 17);
        s->v1 ^= s->v2;
        s->v2 = rotl(s->v2, 32);
}

static void compress(SipHash *s, uint64_t m) {
        s->v3 ^= m;
        sip_round(s);
        sip_round(s);
        s->v0 ^= m;
}

void siphash24_init(SipHash *s, const uint8_t key[static 16]) {
        uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);

        *s = (SipHash) {
                .v0 = k0 ^ UINT64_C(0x736f6d6570736575),
                .v1 = k1 ^ UINT64_C(0x646f72616e646f6d),
                .v2 = k0 ^ UINT64_C(0x6c7967656e657261),
                .v3 = k1 ^ UINT64_C(0x7465646279746573),
        };
}

void siphash24_feed(SipHash *s, const void *p, size_t n) {
        const uint8_t *in = p;

        for (size_t i = 0; i < n; i++) {
                s->tail |= (uint64_t) in[i] << (8 * (s->len % 8));
                s->len++;
                if (s->len % 8 == 0) {
                        compress(s, s->tail);
                        s->tail = 0;
                }
        }
}

uint64_t siphash24_finish(SipHash *s) {
        compress(s, s->tail | (s->len << 56));
        s->v2 ^= 0xff;
        for (unsigned i = 0; i < 4; i++)
                sip_round(s);
        return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}
