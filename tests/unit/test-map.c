/* SPDX-License-Identifier: MIT */
/* src/basic/map.c and siphash24.c: the one hash map. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "map.h"
#include "siphash24.h"

/* The SipHash paper's vectors: key 00..0f, messages 00..(n-1). */
Test(siphash24, the_papers_vectors_whole_and_in_pieces) {
        uint8_t key[16], msg[15];
        for (unsigned i = 0; i < 16; i++)
                key[i] = (uint8_t) i;
        for (unsigned i = 0; i < 15; i++)
                msg[i] = (uint8_t) i;

        SipHash s;
        siphash24_init(&s, key);
        cr_assert_eq(siphash24_finish(&s), UINT64_C(0x726fdb47dd0e0e31), "empty message");

        siphash24_init(&s, key);
        siphash24_feed(&s, msg, sizeof msg);
        cr_assert_eq(siphash24_finish(&s), UINT64_C(0xa129ca6149be45e5), "15 bytes");

        siphash24_init(&s, key);
        siphash24_feed(&s, msg, 3);
        siphash24_feed(&s, msg + 3, 9);
        siphash24_feed(&s, msg + 12, 3);
        cr_assert_eq(siphash24_finish(&s), UINT64_C(0xa129ca6149be45e5), "15 bytes in three pieces");
}

typedef struct Item {
        MapNode node;
        char name[32];
} Item;

static void name_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool name_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, Item, node)->name, key);
}

static const MapType by_name = { .hash = name_hash, .has_key = name_is };

#define N 1024

static Item items[N];

static void fill(Map *m) {
        for (unsigned i = 0; i < N; i++) {
                snprintf(items[i].name, sizeof items[i].name, ":1.%u", i);
                cr_assert_eq(map_put(m, &items[i].node, items[i].name), 0, "put %s", items[i].name);
        }
}

Test(map, put_get_remove_and_grow) {
        Map m = MAP_INIT(&by_name);

        cr_assert_null(map_get(&m, "nothing"), "an empty map finds nothing");
        fill(&m);
        cr_assert_eq(map_size(&m), N);
        cr_assert_geq(m.n_buckets, N, "grown with its items: %zu buckets", m.n_buckets);
        for (unsigned i = 0; i < N; i++)
                cr_assert_eq(map_get(&m, items[i].name), &items[i].node, "get %s", items[i].name);
        cr_assert_null(map_get(&m, ":1.1024"));

        Item dup = { .name = ":1.7" };
        cr_assert_eq(map_put(&m, &dup.node, dup.name), -EEXIST, "a second item of one key");
        cr_assert_eq(map_get(&m, ":1.7"), &items[7].node, "the first stays");

        cr_assert(map_remove(&m, &items[7].node));
        cr_assert_not(map_remove(&m, &items[7].node), "taken out twice");
        cr_assert_null(map_get(&m, ":1.7"));
        cr_assert_eq(map_size(&m), N - 1);
        cr_assert_eq(map_put(&m, &dup.node, dup.name), 0, "the key is free again");
        map_done(&m);
        cr_assert_eq(map_size(&m), 0);
        cr_assert_null(map_get(&m, ":1.8"));
}

Test(map, chains_stay_short) {
        Map m = MAP_INIT(&by_name);
        size_t longest = 0;

        fill(&m);
        for (size_t b = 0; b < m.n_buckets; b++) {
                size_t n = 0;
                for (MapNode *node = m.buckets[b]; node; node = node->next)
                        n++;
                if (n > longest)
                        longest = n;
        }
        /* 1,024 names like a bus daemon's in ≥ 1,024 buckets: a random
         * hash puts at most a handful in one (a weak one, dozens). */
        cr_assert_leq(longest, 8, "longest chain %zu", longest);
        map_done(&m);
}

Test(map, iteration_sees_each_item_once_and_may_take_it_out) {
        Map m = MAP_INIT(&by_name);
        static bool seen[N];
        MapIter it;
        unsigned n = 0;

        fill(&m);
        for (MapNode *node = map_first(&m, &it); node; node = map_next(&m, &it)) {
                Item *item = MAP_ITEM(node, Item, node);
                unsigned i = (unsigned) (item - items);
                cr_assert_not(seen[i], "%s seen twice", item->name);
                seen[i] = true;
                n++;
                if (i % 2)
                        cr_assert(map_remove(&m, node));
        }
        cr_assert_eq(n, N);
        cr_assert_eq(map_size(&m), N / 2, "the odd ones taken out on the way");
        for (unsigned i = 0; i < N; i++)
                cr_assert_eq(map_get(&m, items[i].name) != NULL, i % 2 == 0, "%s", items[i].name);
        map_done(&m);
}

/* A string's hash for a set kept as hashes alone: the maps' own (the
 * same string, the same hash; another string, another; the NUL fed, so a
 * prefix is another string). */
Test(map, a_strings_hash_is_the_maps) {
        cr_assert_eq(map_hash_string("type='signal'"), map_hash_string("type='signal'"));
        cr_assert_neq(map_hash_string("type='signal'"), map_hash_string("type='signal' "));
        cr_assert_neq(map_hash_string("ab"), map_hash_string("a"));
        cr_assert_neq(map_hash_string(""), map_hash_string("a"));
}
