/* SPDX-License-Identifier: MIT */
/* AllowedDomains' names (core/domain-list.c): what an entry may be, and
 * which hosts and ports a list lets a job's proxy reach. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "domain-list.h"

Test(domain_list, entries) {
        static const char *const good[] = { "example.com", "a.b.example.com", "*.example.com", "*.a.example.com",
                                            "localhost", "registry.test:8443", "*.example.com:1", "xn--bcher-kva.example",
                                            "a-b.c-d.e", "1password.com", "x.y.z:65535" };
        static const char *const bad[] = { "", "*", "*.com", "*.", "**.example.com", "a.*.example.com",
                                           "127.0.0.1", "10.0.0.1:80", "1.2.3.4.5", "::1", "[::1]", "example.com:0",
                                           "example.com:65536", "example.com:", "example.com:08", "example.com:8a",
                                           "Example.com", "exa_mple.com", "example..com", ".example.com", "example.com.",
                                           "-a.com", "a-.com", "exämple.com", "a b.com", "example.com:80:80" };
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
                cr_assert(domain_entry_valid(good[i]), "'%s' refused", good[i]);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                cr_assert(!domain_entry_valid(bad[i]), "'%s' taken", bad[i]);
        char label[65], name[400];
        memset(label, 'a', 64);
        label[64] = '\0';
        snprintf(name, sizeof name, "%s.com", label);
        cr_assert(!domain_entry_valid(name), "a 64-byte label");
        label[63] = '\0';
        snprintf(name, sizeof name, "%s.com", label);
        cr_assert(domain_entry_valid(name), "a 63-byte label");
        /* 4 x 63 + 3 dots = 255 > 253. */
        snprintf(name, sizeof name, "%s.%s.%s.%s", label, label, label, label);
        cr_assert(!domain_name_valid(name), "a name over 253 bytes");
}

Test(domain_list, matching) {
        char *list[] = { "pypi.org", "*.npmjs.org", "git.example.com:8443", "localhost", NULL };
        bool exact;
        cr_assert(domain_list_allows(list, "pypi.org", 443, &exact) && exact);
        cr_assert(domain_list_allows(list, "pypi.org", 80, &exact) && exact);
        cr_assert(!domain_list_allows(list, "pypi.org", 22, NULL), "no port listed: 80 and 443 only");
        cr_assert(!domain_list_allows(list, "files.pypi.org", 443, NULL), "a name is itself, not its subdomains");
        cr_assert(domain_list_allows(list, "registry.npmjs.org", 443, &exact) && !exact, "a wildcard is no exact name");
        cr_assert(domain_list_allows(list, "a.b.npmjs.org", 443, NULL));
        cr_assert(!domain_list_allows(list, "npmjs.org", 443, NULL), "*.name is not name itself");
        cr_assert(!domain_list_allows(list, "evilnpmjs.org", 443, NULL), "a suffix that is no subdomain");
        cr_assert(!domain_list_allows(list, "npmjs.org.evil.com", 443, NULL));
        cr_assert(domain_list_allows(list, "git.example.com", 8443, NULL));
        cr_assert(!domain_list_allows(list, "git.example.com", 443, NULL), "a port listed: that one only");
        cr_assert(domain_list_allows(list, "localhost", 80, &exact) && exact);
        cr_assert(!domain_list_allows(NULL, "pypi.org", 443, NULL));
}
