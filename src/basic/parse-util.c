/* SPDX-License-Identifier: MIT */
/* Parsers for option values: strict numbers, byte sizes, CPU percentages. */

#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse-util.h"
#include "macro.h"

int parse_uint64_strict(const char *s, uint64_t *ret, const char **ret_end) {
        char *end = NULL;
        unsigned long long v;

        /* strtoull() accepts leading blanks and a sign; we do not. */
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || end == s)
                return -EINVAL;
        if (!ret_end && *end != '\0')
                return -EINVAL;

        *ret = (uint64_t) v;
        if (ret_end)
                *ret_end = end;
        return 0;
}

int parse_size_bytes(const char *s, uint64_t *ret) {
        static const struct {
                char suffix;
                unsigned shift;
        } suffixes[] = {
                { 'K', 10 },
                { 'M', 20 },
                { 'G', 30 },
                { 'T', 40 },
        };
        const char *end;
        uint64_t v;
        int r;

        if (streq(s, "infinity")) {
                *ret = UINT64_MAX;
                return 0;
        }

        r = parse_uint64_strict(s, &v, &end);
        if (r < 0)
                return r;
        if (*end == '\0') {
                *ret = v;
                return 0;
        }
        if (end[1] != '\0')
                return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (*end == suffixes[i].suffix) {
                        if (v > (UINT64_MAX >> suffixes[i].shift))
                                return -ERANGE;
                        *ret = v << suffixes[i].shift;
                        return 0;
                }

        return -EINVAL;
}

int parse_cpu_percent(const char *s, uint64_t *ret) {
        const char *end;
        uint64_t whole, fraction = 0, scale = 10000;
        int r;

        r = parse_uint64_strict(s, &whole, &end);
        if (r < 0)
                return r;
        if (*end == '.') {
                end++;
                if (*end < '0' || *end > '9')
                        return -EINVAL;
                for (; *end >= '0' && *end <= '9'; end++) {
                        if (scale == 1)
                                return -EINVAL; /* finer than 1 µs */
                        scale /= 10;
                        fraction += (uint64_t) (*end - '0') * scale;
                }
        }
        if (!streq(end, "%"))
                return -EINVAL;
        if (whole > (UINT64_MAX - fraction) / 10000)
                return -ERANGE;

        *ret = whole * 10000 + fraction;
        return 0;
}

static int parse_int_in(const char *s, uint64_t min, int *ret) {
        uint64_t v;
        int r = parse_uint64_strict(s, &v, NULL);
        if (r < 0)
                return r;
        if (v < min || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int parse_fd(const char *s, int *ret) {
        return parse_int_in(s, 0, ret);
}

int parse_pid(const char *s, pid_t *ret) {
        int v;
        int r = parse_int_in(s, 1, &v);
        if (r >= 0)
                *ret = (pid_t) v;
        return r;
}

int parse_signal(const char *s) {
        const char *name = s;
        uint64_t n;

        if (parse_uint64_strict(s, &n, NULL) >= 0)
                return n >= 1 && n < (uint64_t) NSIG ? (int) n : -EINVAL;

        if (strncasecmp(name, "SIG", 3) == 0)
                name += 3;
        for (int sig = 1; sig < NSIG; sig++) {
                const char *abbrev = sigabbrev_np(sig);
                if (abbrev && strcasecmp(abbrev, name) == 0)
                        return sig;
        }
        return -EINVAL;
}
