/* SPDX-License-Identifier: MIT */
/* The record's network_denied (core/network-denied.c): the tally a job's
 * supervisor keeps, its file's text, and the reading bgrund does of it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "network-denied.h"

typedef struct Seen {
        size_t n;
        char hosts[NETWORK_DENIED_MAX + 2][DOMAIN_NAME_MAX + 1];
        uint64_t counts[NETWORK_DENIED_MAX + 2];
} Seen;

static int remember(const char *host, uint64_t count, void *userdata) {
        Seen *s = userdata;
        strcpy(s->hosts[s->n], host);
        s->counts[s->n++] = count;
        return 0;
}

static char text[NETWORK_DENIED_FILE_MAX + 1];

Test(network_denied, tally_and_text) {
        static NetworkDenied d;
        network_denied_add(&d, "pypi.org");
        network_denied_add(&d, "pypi.org");
        network_denied_add(&d, NULL);
        network_denied_add(&d, "127.0.0.1");
        network_denied_add(&d, "evil.test");
        network_denied_format(&d, text, sizeof text);
        cr_assert_str_eq(text, "2 pypi.org\n1 evil.test\n2 (invalid)\n");
        Seen s = {};
        cr_assert_eq(network_denied_parse(text, remember, &s), 0);
        cr_assert_eq(s.n, 3);
        cr_assert_str_eq(s.hosts[2], "(invalid)");
        cr_assert_eq(s.counts[0], 2);
}

Test(network_denied, bounded) {
        static NetworkDenied d;
        char host[32];
        for (int i = 0; i < NETWORK_DENIED_MAX + 10; i++) {
                snprintf(host, sizeof host, "host%d.test", i);
                network_denied_add(&d, host);
        }
        network_denied_add(&d, "host0.test");
        cr_assert_eq(d.n, NETWORK_DENIED_MAX);
        cr_assert_eq(d.other, 10);
        cr_assert_eq(d.hosts[0].count, 2);
        /* Every line at its longest still fits the file's bound. */
        static NetworkDenied full;
        char name[DOMAIN_NAME_MAX + 1];
        for (int i = 0; i < NETWORK_DENIED_MAX; i++) {
                memset(name, 'a', DOMAIN_NAME_MAX);
                name[DOMAIN_NAME_MAX] = '\0';
                for (int k = 63; k < DOMAIN_NAME_MAX; k += 64)
                        name[k] = '.';
                snprintf(name + DOMAIN_NAME_MAX - 4, 5, "%04d", i);
                name[DOMAIN_NAME_MAX - 5] = 'x';
                network_denied_add(&full, name);
                full.hosts[full.n - 1].count = UINT64_MAX;
        }
        cr_assert_eq(full.n, NETWORK_DENIED_MAX, "the long names are valid ones");
        full.other = full.invalid = UINT64_MAX;
        size_t len = network_denied_format(&full, text, sizeof text);
        cr_assert_leq(len, NETWORK_DENIED_FILE_MAX);
        Seen s = {};
        cr_assert_eq(network_denied_parse(text, remember, &s), 0);
        cr_assert_eq(s.n, NETWORK_DENIED_MAX + 2, "every line read back, (other) and (invalid) too");
}

Test(network_denied, hostile_text) {
        static const char *const bad[] = {
                "1 pypi.org",              /* no newline */
                "0 pypi.org\n",            /* no count of 0 is written */
                "x pypi.org\n",
                "1  pypi.org\n",
                "1 Pypi.org\n",
                "1 10.0.0.1\n",
                "1 (others)\n",
                "1 pypi.org\tx\n",
                "99999999999999999999999 pypi.org\n",
                "-1 pypi.org\n",
                "1 \n",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                Seen s = {};
                cr_assert_eq(network_denied_parse(bad[i], remember, &s), -EBADMSG, "'%s' taken", bad[i]);
        }
        /* More lines than the tally ever makes. */
        static char many[(NETWORK_DENIED_MAX + 3) * 16];
        size_t len = 0;
        for (int i = 0; i < NETWORK_DENIED_MAX + 3; i++)
                len += (size_t) snprintf(many + len, sizeof many - len, "1 h%d.test\n", i);
        Seen s = {};
        cr_assert_eq(network_denied_parse(many, remember, &s), -EBADMSG);
}
