/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "macro.h"

#define USEC_PER_MINUTE (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)
#define USEC_PER_WEEK (7 * USEC_PER_DAY)

#define WHITESPACE " \t\n\r"

static const struct {
        const char *suffix;
        uint64_t usec;
} unit_table[] = {
        { "us",      1               },
        { "usec",    1               },
        { "ms",      USEC_PER_MSEC   },
        { "msec",    USEC_PER_MSEC   },
        { "s",       USEC_PER_SEC    },
        { "sec",     USEC_PER_SEC    },
        { "second",  USEC_PER_SEC    },
        { "seconds", USEC_PER_SEC    },
        { "m",       USEC_PER_MINUTE },
        { "min",     USEC_PER_MINUTE },
        { "minute",  USEC_PER_MINUTE },
        { "minutes", USEC_PER_MINUTE },
        { "h",       USEC_PER_HOUR   },
        { "hr",      USEC_PER_HOUR   },
        { "hour",    USEC_PER_HOUR   },
        { "hours",   USEC_PER_HOUR   },
        { "d",       USEC_PER_DAY    },
        { "day",     USEC_PER_DAY    },
        { "days",    USEC_PER_DAY    },
        { "w",       USEC_PER_WEEK   },
        { "week",    USEC_PER_WEEK   },
        { "weeks",   USEC_PER_WEEK   },
};

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int unit_lookup(const char *s, size_t n, uint64_t *ret) {
        /* A bare number means seconds, also inside a combination ("1min 30"). */
        if (n == 0) {
                *ret = USEC_PER_SEC;
                return 0;
        }

        for (size_t i = 0; i < ELEMENTSOF(unit_table); i++)
                if (strlen(unit_table[i].suffix) == n && strncmp(unit_table[i].suffix, s, n) == 0) {
                        *ret = unit_table[i].usec;
                        return 0;
                }

        return -EINVAL;
}

/* One "<number>[.<fraction>][ ]<unit>" part; *p is advanced past it. */
static int parse_one(const char **p, uint64_t *ret) {
        const char *s = *p;
        uint64_t whole = 0, multiplier, r;
        const char *frac = NULL;
        size_t n_frac = 0;
        bool any_digit = false;
        int k;

        /* strtoull() would quietly accept "-5" and "+5"; digits are parsed by
         * hand so that only plain numbers get through. */
        for (; is_digit(*s); s++) {
                unsigned d = (unsigned) (*s - '0');

                if (whole > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                whole = whole * 10 + d;
                any_digit = true;
        }

        if (*s == '.') {
                s++;
                frac = s;
                for (; is_digit(*s); s++)
                        n_frac++;
                any_digit = any_digit || n_frac > 0;
        }

        if (!any_digit)
                return -EINVAL;

        s += strspn(s, WHITESPACE);

        const char *u = s;
        while (is_alpha(*s))
                s++;

        k = unit_lookup(u, (size_t) (s - u), &multiplier);
        if (k < 0)
                return k;

        if (whole > UINT64_MAX / multiplier)
                return -ERANGE;
        r = whole * multiplier;

        /* Digits below the microsecond are dropped, not rounded. */
        for (uint64_t m = multiplier / 10; n_frac > 0 && m > 0; n_frac--, frac++, m /= 10) {
                uint64_t add = (uint64_t) (*frac - '0') * m;

                if (r > UINT64_MAX - add)
                        return -ERANGE;
                r += add;
        }

        *p = s;
        *ret = r;
        return 0;
}

int parse_duration_usec(const char *s, uint64_t *ret) {
        uint64_t sum = 0;
        bool any = false;
        size_t n;

        if (!s || !ret)
                return -EINVAL;

        s += strspn(s, WHITESPACE);
        n = strlen(s);
        while (n > 0 && strchr(WHITESPACE, s[n - 1]))
                n--;

        if (n == strlen("infinity") && strncmp(s, "infinity", n) == 0) {
                *ret = UINT64_MAX;
                return 0;
        }

        for (;;) {
                uint64_t v;
                int r;

                s += strspn(s, WHITESPACE);
                if (*s == '\0')
                        break;

                r = parse_one(&s, &v);
                if (r < 0)
                        return r;

                /* UINT64_MAX is reserved for "infinity"; a finite span must
                 * stay below it. */
                if (v >= UINT64_MAX - sum)
                        return -ERANGE;
                sum += v;
                any = true;

                /* "5s!", "5s-3s" or "1.5.5": only whitespace or another
                 * number may follow a part. */
                if (*s != '\0' && !strchr(WHITESPACE, *s) && !is_digit(*s))
                        return -EINVAL;
        }

        if (!any)
                return -EINVAL;

        *ret = sum;
        return 0;
}

char *format_duration(char *buf, size_t len, uint64_t usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
                unsigned frac_digits;
        } table[] = {
                { "w",   USEC_PER_WEEK,   0 },
                { "d",   USEC_PER_DAY,    0 },
                { "h",   USEC_PER_HOUR,   0 },
                { "min", USEC_PER_MINUTE, 0 },
                { "s",   USEC_PER_SEC,    6 },
                { "ms",  USEC_PER_MSEC,   3 },
                { "us",  1,               0 },
        };
        char *p = buf;
        size_t left = len;
        bool first = true;

        if (!buf || len == 0)
                return buf;

        if (usec == UINT64_MAX) {
                snprintf(buf, len, "infinity");
                return buf;
        }
        if (usec == 0) {
                snprintf(buf, len, "0");
                return buf;
        }

        *buf = '\0';

        for (size_t i = 0; i < ELEMENTSOF(table) && usec > 0; i++) {
                uint64_t a, b;
                int n;

                if (usec < table[i].usec)
                        continue;

                a = usec / table[i].usec;
                b = usec % table[i].usec;

                if (usec < USEC_PER_MINUTE && b > 0 && table[i].frac_digits > 0) {
                        /* Below a minute, seconds and milliseconds with a
                         * remainder are printed in dot notation like systemd
                         * does ("1.500s"); trailing zeros are trimmed in
                         * groups of three so the precision shown stays ms
                         * or µs. */
                        unsigned digits = table[i].frac_digits;

                        while (digits > 3 && b % 1000 == 0) {
                                b /= 1000;
                                digits -= 3;
                        }

                        n = snprintf(p, left, "%s%" PRIu64 ".%0*" PRIu64 "%s",
                                     first ? "" : " ", a, (int) digits, b, table[i].suffix);
                        b = 0;
                } else
                        n = snprintf(p, left, "%s%" PRIu64 "%s", first ? "" : " ", a, table[i].suffix);

                if (n < 0 || (size_t) n >= left) {
                        /* Rather drop a part than print half of one: "1d 1"
                         * would read as a valid, different span. */
                        *p = '\0';
                        break;
                }

                p += n;
                left -= (size_t) n;
                usec = b;
                first = false;
        }

        return buf;
}
