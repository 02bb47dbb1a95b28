/* SPDX-License-Identifier: MIT */
/* parse_size_bytes() and parse_cpu_percent() on the same string, each
 * checked against a plain model of its grammar:
 *   size:    "infinity" | DIGITS [K|M|G|T]         (base 1024)
 *   percent: DIGITS ["." 1 to 4 DIGITS] "%"        (1% = 10000 µs per second)
 * The model computes in 128 bits: a value past 64 bits must be -ERANGE, a
 * string outside the grammar -EINVAL (or -ERANGE when its leading digits
 * already overflow), and nothing else may parse. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include "fuzz.h"
#include "parse-util.h"

typedef unsigned __int128 u128;
#define OVER ((u128) 1 << 100) /* saturate: far past 64 bits, far from 128 */

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* Reads DIGITS+ at *p, saturating; false if there is none. */
static bool digits(const char **p, u128 *ret) {
        const char *s = *p;
        u128 v = 0;
        if (!is_digit(*s))
                return false;
        for (; is_digit(*s); s++)
                v = v >= OVER ? OVER : v * 10 + (unsigned) (*s - '0');
        *p = s;
        *ret = v;
        return true;
}

/* 0 and *ret, or -EINVAL (not of the grammar) or -ERANGE. */
static int model_size(const char *s, u128 *ret) {
        if (strcmp(s, "infinity") == 0) {
                *ret = UINT64_MAX;
                return 0;
        }
        u128 v;
        if (!digits(&s, &v))
                return -EINVAL;
        unsigned shift = 0;
        if (*s) {
                const char *k = strchr("KMGT", *s);
                if (!k || s[1])
                        return -EINVAL;
                shift = 10 * (unsigned) (k - "KMGT" + 1);
        }
        v = v >= OVER ? OVER : v << shift;
        if (v > UINT64_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int model_percent(const char *s, u128 *ret) {
        u128 whole, frac = 0;
        if (!digits(&s, &whole))
                return -EINVAL;
        if (*s == '.') {
                s++;
                unsigned n = 0;
                u128 scale = 10000;
                if (!is_digit(*s))
                        return -EINVAL;
                for (; is_digit(*s); s++, n++) {
                        if (n == 4)
                                return -EINVAL;
                        scale /= 10;
                        frac += (unsigned) (*s - '0') * scale;
                }
        }
        if (strcmp(s, "%") != 0)
                return -EINVAL;
        u128 v = whole >= OVER ? OVER : whole * 10000 + frac;
        if (v > UINT64_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* Where the model says -EINVAL the parser may say -ERANGE only when the
 * string starts with more digits than 64 bits hold (it reads the number
 * first); the reverse never. */
static bool leading_digits_overflow(const char *s) {
        u128 v;
        return digits(&s, &v) && v > UINT64_MAX;
}

static void check(const char *what, const char *s, int r, uint64_t v, int m, u128 mv) {
        if (m == 0) {
                FUZZ_CHECK(r == 0, "%s('%s'): %d, expected %" PRIu64, what, s, r, (uint64_t) mv);
                FUZZ_CHECK(v == (uint64_t) mv, "%s('%s'): %" PRIu64 ", expected %" PRIu64, what, s, v, (uint64_t) mv);
                return;
        }
        FUZZ_CHECK(r < 0, "%s('%s') parsed to %" PRIu64 ", expected %d", what, s, v, m);
        FUZZ_CHECK(v == 0xdeadbeef, "%s('%s'): a failed parse wrote its output", what, s);
        FUZZ_CHECK(r == m || (m == -EINVAL && r == -ERANGE && leading_digits_overflow(s)),
                   "%s('%s'): %d, expected %d", what, s, r, m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_strndup(data, size);
        uint64_t v;
        u128 mv = 0;
        int r, m;

        v = 0xdeadbeef;
        r = parse_size_bytes(s, &v);
        m = model_size(s, &mv);
        check("parse_size_bytes", s, r, v, m, mv);

        v = 0xdeadbeef;
        r = parse_cpu_percent(s, &v);
        m = model_percent(s, &mv);
        check("parse_cpu_percent", s, r, v, m, mv);

        free(s);
        return 0;
}
