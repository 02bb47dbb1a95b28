/* SPDX-License-Identifier: MIT */
/* src/basic/name-cache.c: bgrund's caches of callers by unique name (who
 * they are, and who is gone), which the credentials filter asks on every
 * call: a map with an age order, never a scan (issue #37, row 1). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "name-cache.h"

#define GONE 1024

static size_t longest_chain(const Map *m) {
        size_t longest = 0;
        for (size_t b = 0; b < m->n_buckets; b++) {
                size_t n = 0;
                for (MapNode *node = m->buckets[b]; node; node = node->next)
                        n++;
                if (n > longest)
                        longest = n;
        }
        return longest;
}

Test(name_cache, a_thousand_departed_names_are_found_without_a_scan) {
        NameCache c;
        char name[NAME_CACHE_NAME_MAX];

        cr_assert_eq(name_cache_init(&c, GONE), 0);
        for (unsigned i = 0; i < GONE; i++) {
                snprintf(name, sizeof name, ":1.%u", 5000 + i);
                cr_assert_geq(name_cache_put(&c, name), 0, "%s", name);
        }
        for (unsigned i = 0; i < GONE; i++) {
                snprintf(name, sizeof name, ":1.%u", 5000 + i);
                cr_assert_geq(name_cache_find(&c, name), 0, "%s departed", name);
        }
        cr_assert_eq(name_cache_find(&c, ":1.4999"), -1, "a name never put");
        /* A lookup walks one chain of a map as big as the cache: a few
         * names, never the thousand. */
        cr_assert_eq(map_size(&c.map), GONE);
        cr_assert_geq(c.map.n_buckets, GONE);
        cr_assert_leq(longest_chain(&c.map), 8, "longest chain %zu", longest_chain(&c.map));
        name_cache_done(&c);
}

Test(name_cache, the_oldest_is_forgotten_first_and_a_name_is_kept_once) {
        NameCache c;
        char name[NAME_CACHE_NAME_MAX];

        cr_assert_eq(name_cache_init(&c, 4), 0);
        for (unsigned i = 0; i < 4; i++) {
                snprintf(name, sizeof name, ":1.%u", i);
                cr_assert_eq(name_cache_put(&c, name), (ssize_t) i);
        }
        cr_assert_eq(name_cache_put(&c, ":1.2"), 2, "put again: its own slot");
        cr_assert_eq(map_size(&c.map), 4);
        cr_assert_eq(name_cache_put(&c, ":1.9"), 0, "the fifth takes the oldest's slot");
        cr_assert_eq(name_cache_find(&c, ":1.0"), -1, "the oldest forgotten");
        cr_assert_eq(name_cache_find(&c, ":1.9"), 0);
        cr_assert_eq(name_cache_find(&c, ":1.1"), 1, "the others kept");
        name_cache_forget(&c, ":1.1");
        cr_assert_eq(name_cache_find(&c, ":1.1"), -1);
        cr_assert_eq(map_size(&c.map), 3);

        char big[NAME_CACHE_NAME_MAX + 1];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = 0;
        cr_assert_eq(name_cache_put(&c, big), -1, "a name too long is not kept");
        name_cache_done(&c);
}
