/* SPDX-License-Identifier: MIT */
/* The parsers behind bgrun's option values (src/basic/parse-util.c):
 * strict numbers, byte sizes, CPU percentages. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>

#include "macro.h"
#include "parse-util.h"

#define UNTOUCHED UINT64_C(0xdeadbeef)

typedef struct Case {
        const char *in;
        int r;         /* 0, -EINVAL or -ERANGE */
        uint64_t want; /* if r == 0 */
} Case;

static void check(const char *what, int (*parse)(const char *, uint64_t *), const Case *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                uint64_t v = UNTOUCHED;
                int r = parse(cases[i].in, &v);

                cr_assert_eq(r, cases[i].r, "%s(\"%s\") = %d, want %d", what, cases[i].in, r, cases[i].r);
                if (r == 0)
                        cr_assert_eq(v, cases[i].want, "%s(\"%s\") = %" PRIu64 ", want %" PRIu64, what,
                                     cases[i].in, v, cases[i].want);
                else
                        cr_assert_eq(v, UNTOUCHED, "%s(\"%s\") wrote its result on failure", what, cases[i].in);
        }
}

static int parse_uint64_whole(const char *s, uint64_t *ret) {
        return parse_uint64_strict(s, ret, NULL);
}

Test(parse, uint64_strict) {
        static const Case cases[] = {
                { "0", 0, 0 },
                { "42", 0, 42 },
                { "007", 0, 7 },
                { "18446744073709551615", 0, UINT64_MAX },
                { "18446744073709551616", -ERANGE, 0 },
                { "99999999999999999999999", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { " 1", -EINVAL, 0 },
                { "+1", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { "1 ", -EINVAL, 0 },
                { "0x10", -EINVAL, 0 },
                { "1a", -EINVAL, 0 },
                { "1.5", -EINVAL, 0 },
        };

        check("parse_uint64_strict", parse_uint64_whole, cases, ELEMENTSOF(cases));
        cr_assert_eq(parse_uint64_strict(NULL, &(uint64_t) { 0 }, NULL), -EINVAL);
}

Test(parse, uint64_strict_with_end) {
        const char *end = NULL;
        uint64_t v = 0;

        cr_assert_eq(parse_uint64_strict("12K", &v, &end), 0);
        cr_assert_eq(v, 12);
        cr_assert_str_eq(end, "K");

        cr_assert_eq(parse_uint64_strict("5", &v, &end), 0);
        cr_assert_eq(v, 5);
        cr_assert_str_eq(end, "");

        /* Still a number first. */
        end = NULL;
        cr_assert_eq(parse_uint64_strict("K", &v, &end), -EINVAL);
        cr_assert_null(end);
}

Test(parse, size_bytes) {
        static const Case cases[] = {
                { "0", 0, 0 },
                { "1024", 0, 1024 },
                { "1K", 0, UINT64_C(1) << 10 },
                { "512K", 0, UINT64_C(512) << 10 },
                { "1M", 0, UINT64_C(1) << 20 },
                { "1G", 0, UINT64_C(1) << 30 },
                { "3T", 0, UINT64_C(3) << 40 },
                { "infinity", 0, UINT64_MAX },
                { "18446744073709551615", 0, UINT64_MAX },
                /* The largest that fit with a suffix, and one more. */
                { "17179869183G", 0, UINT64_C(17179869183) << 30 },
                { "17179869184G", -ERANGE, 0 },
                { "16777215T", 0, UINT64_C(16777215) << 40 },
                { "16777216T", -ERANGE, 0 },
                { "18446744073709551616", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { "K", -EINVAL, 0 },
                { "1k", -EINVAL, 0 },
                { "1KB", -EINVAL, 0 },
                { "1P", -EINVAL, 0 },
                { "1 K", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { "1.5G", -EINVAL, 0 },
                { "Infinity", -EINVAL, 0 },
                { "infinity ", -EINVAL, 0 },
        };

        check("parse_size_bytes", parse_size_bytes, cases, ELEMENTSOF(cases));
}

Test(parse, cpu_percent) {
        static const Case cases[] = {
                { "50%", 0, 500000 },
                { "100%", 0, 1000000 },
                { "200%", 0, 2000000 },
                { "0%", 0, 0 },
                { "12.5%", 0, 125000 },
                { "0.0001%", 0, 1 },
                { "1.2345%", 0, 12345 },
                /* Finer than a microsecond per second. */
                { "0.00001%", -EINVAL, 0 },
                { "1.%", -EINVAL, 0 },
                { ".5%", -EINVAL, 0 },
                { "50", -EINVAL, 0 },
                { "50%%", -EINVAL, 0 },
                { "5 %", -EINVAL, 0 },
                { "%", -EINVAL, 0 },
                { "-5%", -EINVAL, 0 },
                { "", -EINVAL, 0 },
                /* The edge of uint64: whole * 10000 + fraction. */
                { "1844674407370955.1615%", 0, UINT64_MAX },
                { "1844674407370955.1616%", -ERANGE, 0 },
                { "1844674407370956%", -ERANGE, 0 },
                { "99999999999999999999%", -ERANGE, 0 },
        };

        check("parse_cpu_percent", parse_cpu_percent, cases, ELEMENTSOF(cases));
}

/* What bgrund passes its supervisor: no atoi(), whose "3x" is 3 and whose
 * garbage is 0, a descriptor the supervisor would then write to. */
Test(parse, fd_and_pid) {
        static const struct {
                const char *in;
                int r;
                int fd;  /* parse_fd's, if r == 0 */
                int pid; /* parse_pid's r */
        } cases[] = {
                { "0", 0, 0, -ERANGE },
                { "3", 0, 3, 0 },
                { "2147483647", 0, 2147483647, 0 },
                { "2147483648", -ERANGE, 0, -ERANGE },
                { "3x", -EINVAL, 0, -EINVAL },
                { "-1", -EINVAL, 0, -EINVAL },
                { " 3", -EINVAL, 0, -EINVAL },
                { "", -EINVAL, 0, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int fd = -7;
                pid_t pid = -7;

                cr_assert_eq(parse_fd(cases[i].in, &fd), cases[i].r, "parse_fd(\"%s\")", cases[i].in);
                cr_assert_eq(fd, cases[i].r == 0 ? cases[i].fd : -7, "parse_fd(\"%s\") wrote %d", cases[i].in, fd);
                cr_assert_eq(parse_pid(cases[i].in, &pid), cases[i].pid, "parse_pid(\"%s\")", cases[i].in);
                if (cases[i].pid == 0)
                        cr_assert_eq(pid, cases[i].fd, "parse_pid(\"%s\")", cases[i].in);
                else
                        cr_assert_eq(pid, -7, "parse_pid(\"%s\") wrote on failure", cases[i].in);
        }
}

/* A signal by name, any case, with or without SIG, or by number in range. */
Test(parse, signal) {
        static const struct {
                const char *in;
                int sig;
        } cases[] = {
                { "TERM", SIGTERM }, { "SIGTERM", SIGTERM }, { "sigint", SIGINT }, { "kill", SIGKILL },
                { "15", SIGTERM },   { "1", SIGHUP },        { "0", -EINVAL },    { "65", -EINVAL },
                { "", -EINVAL },     { "SIG", -EINVAL },     { "TERMX", -EINVAL }, { "15x", -EINVAL },
                { "-9", -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_assert_eq(parse_signal(cases[i].in), cases[i].sig, "parse_signal(\"%s\")", cases[i].in);
}
