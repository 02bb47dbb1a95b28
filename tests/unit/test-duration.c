/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "duration.h"
#include "macro.h"

#define MINUTE (60 * USEC_PER_SEC)
#define HOUR (60 * MINUTE)
#define DAY (24 * HOUR)

static const struct {
        const char *in;
        uint64_t usec;
} good[] = {
        { "0",               0 },
        { "90",              90 * USEC_PER_SEC },
        { "90s",             90 * USEC_PER_SEC },
        { "500ms",           500 * USEC_PER_MSEC },
        { "5min",            5 * MINUTE },
        { "1h30min",         HOUR + 30 * MINUTE },
        { "1h 30min",        HOUR + 30 * MINUTE },
        { "  1h   30min  ",  HOUR + 30 * MINUTE },
        { "1.5s",            1500 * USEC_PER_MSEC },
        { "1.5",             1500 * USEC_PER_MSEC },
        { "0.5h",            30 * MINUTE },
        { ".25s",            250 * USEC_PER_MSEC },
        { "1.0000015s",      1000001 },
        { "2d",              2 * DAY },
        { "1w",              7 * DAY },
        { "3 weeks",         21 * DAY },
        { "10us",            10 },
        { "10usec",          10 },
        { "7msec",           7 * USEC_PER_MSEC },
        { "2m",              2 * MINUTE },
        { "1hr",             HOUR },
        { "2hours",          2 * HOUR },
        { "1minute 1second", MINUTE + USEC_PER_SEC },
        { "5 s",             5 * USEC_PER_SEC },
        { "1min30",          90 * USEC_PER_SEC },
        { "1d2h3min4s5ms6us", DAY + 2 * HOUR + 3 * MINUTE + 4 * USEC_PER_SEC + 5 * USEC_PER_MSEC + 6 },
        { "infinity",        UINT64_MAX },
        { " infinity ",      UINT64_MAX },
};

Test(duration, parse_table) {
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                uint64_t v = 12345;
                int r = parse_duration_usec(good[i].in, &v);

                cr_assert_eq(r, 0, "parse(\"%s\") = %d", good[i].in, r);
                cr_assert_eq(v, good[i].usec, "parse(\"%s\") = %" PRIu64 ", want %" PRIu64,
                             good[i].in, v, good[i].usec);
        }
}

static const struct {
        const char *in;
        int err;
} bad[] = {
        { "",                     -EINVAL },
        { "   ",                  -EINVAL },
        { "-5s",                  -EINVAL },
        { "+5s",                  -EINVAL },
        { "1s -5s",               -EINVAL },
        { "5x",                   -EINVAL },
        { "5sx",                  -EINVAL },
        { "5s!",                  -EINVAL },
        { "s",                    -EINVAL },
        { ".s",                   -EINVAL },
        { "1.5.5",                -EINVAL },
        { "infinityx",            -EINVAL },
        { "inf",                  -EINVAL },
        { "1h infinity",          -EINVAL },
        { "5 mins please",        -EINVAL },
        { "0x10",                 -EINVAL },
        { "18446744073709551616", -ERANGE },
        { "99999999999999999999999s", -ERANGE },
        { "18446744073709w",      -ERANGE },
        { "18446744073709551615us", -ERANGE }, /* that is infinity's value */
        { "18446744073709551614us 1us", -ERANGE },
};

Test(duration, parse_invalid) {
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                uint64_t v = 777;
                int r = parse_duration_usec(bad[i].in, &v);

                cr_assert_eq(r, bad[i].err, "parse(\"%s\") = %d, want %d", bad[i].in, r, bad[i].err);
                cr_assert_eq(v, 777, "parse(\"%s\") wrote its output on failure", bad[i].in);
        }
}

Test(duration, parse_null) {
        uint64_t v;

        cr_assert_eq(parse_duration_usec(NULL, &v), -EINVAL);
}

Test(duration, parse_largest_finite) {
        uint64_t v;

        cr_assert_eq(parse_duration_usec("18446744073709551614us", &v), 0);
        cr_assert_eq(v, UINT64_MAX - 1);
}

static const struct {
        uint64_t usec;
        const char *out;
} fmt[] = {
        { 0,                                     "0" },
        { UINT64_MAX,                            "infinity" },
        { 1,                                     "1us" },
        { 500 * USEC_PER_MSEC,                   "500ms" },
        { 1500,                                  "1.500ms" },
        { 2 * USEC_PER_SEC,                      "2s" },
        { 1500 * USEC_PER_MSEC,                  "1.500s" },
        { 1000001,                               "1.000001s" },
        { 90 * USEC_PER_SEC,                     "1min 30s" },
        { HOUR + 30 * MINUTE,                       "1h 30min" },
        { DAY + HOUR,                            "1d 1h" },
        { 8 * DAY,                               "1w 1d" },
        { MINUTE + 500 * USEC_PER_MSEC,             "1min 500ms" },
        { HOUR + 1,                              "1h 1us" },
};

Test(duration, format_table) {
        for (size_t i = 0; i < ELEMENTSOF(fmt); i++) {
                char buf[64];

                cr_assert_eq(format_duration(buf, sizeof(buf), fmt[i].usec), buf);
                cr_assert_str_eq(buf, fmt[i].out, "format(%" PRIu64 ") = \"%s\", want \"%s\"",
                                 fmt[i].usec, buf, fmt[i].out);
        }
}

Test(duration, format_roundtrip) {
        static const uint64_t values[] = {
                1, 999, 1000, 1001, 1500000, 59999999, 60000000, 61000001,
                3600000000ULL, 86400000000ULL * 9 + 17, UINT64_MAX - 1, UINT64_MAX,
        };

        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                char buf[128];
                uint64_t v;

                format_duration(buf, sizeof(buf), values[i]);
                cr_assert_eq(parse_duration_usec(buf, &v), 0, "re-parse of \"%s\"", buf);
                cr_assert_eq(v, values[i], "\"%s\" parsed back as %" PRIu64, buf, v);
        }
}

Test(duration, format_truncates_safely) {
        char buf[8];

        memset(buf, 'x', sizeof(buf));
        format_duration(buf, sizeof(buf), DAY + HOUR + MINUTE + USEC_PER_SEC);
        cr_assert(memchr(buf, '\0', sizeof(buf)) != NULL, "not NUL-terminated");
        cr_assert_str_eq(buf, "1d 1h");

        char one[1] = { 'x' };
        format_duration(one, sizeof(one), 5 * USEC_PER_SEC);
        cr_assert_eq(one[0], '\0');
}
