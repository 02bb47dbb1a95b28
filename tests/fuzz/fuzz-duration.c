/* SPDX-License-Identifier: MIT */
/* parse_duration_usec() and format_duration().
 *
 * Input: a first byte that chooses the mode, then
 *   even: a string for parse_duration_usec(); what parses is formatted and
 *         must parse back to the same number of microseconds;
 *   odd:  eight bytes (little endian) of microseconds for format_duration();
 *         the text must parse back to them.
 * Either way the number is then formatted into every buffer size from 1 to
 * 64: the text is always terminated inside the buffer, is a prefix of the
 * full text that ends where a part ends (never half a part: "1d 1" would read
 * as another span), and parses to no more than the number ("infinity" cut
 * short is no span at all: it must not parse). */
#include <errno.h>
#include <inttypes.h>

#include "duration.h"
#include "fuzz.h"

/* Longest possible: "30500568w 6d 23h 59min 59s 999ms 999us" is 39 bytes. */
#define FULL_MAX 128

static void check_format(uint64_t usec) {
        char full[FULL_MAX], buf[FULL_MAX];

        FUZZ_CHECK(format_duration(full, sizeof full, usec) == full, "return value");
        size_t n = strnlen(full, sizeof full);
        FUZZ_CHECK(n > 0 && n < sizeof full, "length %zu of the text of %" PRIu64, n, usec);

        uint64_t back = 0;
        int r = parse_duration_usec(full, &back);
        FUZZ_CHECK(r == 0, "'%s' (formatted %" PRIu64 ") does not parse: %d", full, usec, r);
        FUZZ_CHECK(back == usec, "'%s' parses to %" PRIu64 ", formatted from %" PRIu64, full, back, usec);

        for (size_t len = 1; len <= 64; len++) {
                memset(buf, 'X', sizeof buf);
                format_duration(buf, len, usec);
                size_t k = strnlen(buf, len);
                FUZZ_CHECK(k < len, "not terminated in a buffer of %zu (%" PRIu64 ")", len, usec);
                FUZZ_CHECK(buf[len] == 'X' || len == sizeof buf, "wrote past a buffer of %zu", len);
                FUZZ_CHECK(strncmp(buf, full, k) == 0, "'%s' in %zu bytes is no prefix of '%s'", buf, len, full);
                if (usec == UINT64_MAX) {
                        /* "infinity" is one word; cut short it is no span at all. */
                        uint64_t x;
                        FUZZ_CHECK(k == n || parse_duration_usec(buf, &x) < 0, "'%s' parses", buf);
                        continue;
                }
                if (k > 0) {
                        FUZZ_CHECK(full[k] == '\0' || full[k] == ' ', "'%s' in %zu bytes ends inside a part of '%s'",
                                   buf, len, full);
                        uint64_t part = 0;
                        r = parse_duration_usec(buf, &part);
                        FUZZ_CHECK(r == 0, "the shortened '%s' does not parse: %d", buf, r);
                        FUZZ_CHECK(part <= usec, "the shortened '%s' is more than %" PRIu64, buf, usec);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;

        if (data[0] & 1) {
                uint64_t usec = 0;
                for (size_t i = 0; i < 8 && i + 1 < size; i++)
                        usec |= (uint64_t) data[i + 1] << (8 * i);
                check_format(usec);
                return 0;
        }

        char *s = fuzz_strndup(data + 1, size - 1);
        uint64_t v = 0xdeadbeef;
        int r = parse_duration_usec(s, &v);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL || r == -ERANGE, "parse_duration_usec('%s'): %d", s, r);
                FUZZ_CHECK(v == 0xdeadbeef, "a failed parse wrote its output");
        } else {
                FUZZ_CHECK(r == 0, "parse_duration_usec: %d", r);
                check_format(v);
        }
        free(s);
        return 0;
}
