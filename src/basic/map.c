/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "map.h"

#define MAP_MIN_BUCKETS 16

/* The hash's key, drawn once per process. Without the kernel's randomness
 * (never, in practice) the clock and the pid stand in: the map stays
 * correct, only less hard to flood. */
static const uint8_t *hash_key(void) {
        static uint8_t key[16];
        static bool drawn;

        if (!drawn) {
                if (getrandom(key, sizeof key, GRND_NONBLOCK) != (ssize_t) sizeof key) {
                        struct timespec ts;
                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        uint64_t a = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 32), b = (uint64_t) getpid();
                        memcpy(key, &a, 8);
                        memcpy(key + 8, &b, 8);
                }
                drawn = true;
        }
        return key;
}

static uint64_t hash_of(const Map *m, const void *key) {
        SipHash s;

        siphash24_init(&s, hash_key());
        m->type->hash(key, &s);
        return siphash24_finish(&s);
}

void map_feed_string(SipHash *state, const char *s) {
        /* With its NUL: ("ab", "c") and ("a", "bc") feed apart. */
        siphash24_feed(state, s, strlen(s) + 1);
}

uint64_t map_hash_string(const char *s) {
        SipHash state;

        siphash24_init(&state, hash_key());
        map_feed_string(&state, s);
        return siphash24_finish(&state);
}

void map_feed_u64(SipHash *state, uint64_t v) {
        siphash24_feed(state, &v, sizeof v);
}

static size_t bucket_of(uint64_t hash, size_t n_buckets) {
        return (size_t) (hash & (n_buckets - 1)); /* n_buckets is a power of two */
}

/* Twice the buckets once there are more items than buckets: chains stay
 * short. A failure to grow leaves the map as it was. */
static int grow(Map *m) {
        if (m->n_nodes < m->n_buckets)
                return 0;
        size_t n = m->n_buckets ? m->n_buckets * 2 : MAP_MIN_BUCKETS;
        MapNode **b = calloc(n, sizeof(MapNode *));
        if (!b)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_buckets; i++)
                for (MapNode *node = m->buckets[i], *next; node; node = next) {
                        next = node->next;
                        size_t h = bucket_of(node->hash, n);
                        node->next = b[h];
                        b[h] = node;
                }
        free(m->buckets);
        m->buckets = b;
        m->n_buckets = n;
        return 0;
}

static MapNode *find(const Map *m, const void *key, uint64_t hash) {
        if (m->n_buckets == 0)
                return NULL;
        for (MapNode *node = m->buckets[bucket_of(hash, m->n_buckets)]; node; node = node->next)
                if (node->hash == hash && m->type->has_key(node, key))
                        return node;
        return NULL;
}

int map_put(Map *m, MapNode *node, const void *key) {
        uint64_t hash = hash_of(m, key);

        if (find(m, key, hash))
                return -EEXIST;
        if (grow(m) < 0 && m->n_buckets == 0)
                return -ENOMEM;
        size_t h = bucket_of(hash, m->n_buckets);
        node->hash = hash;
        node->next = m->buckets[h];
        m->buckets[h] = node;
        m->n_nodes++;
        return 0;
}

MapNode *map_get(const Map *m, const void *key) {
        if (m->n_nodes == 0)
                return NULL;
        return find(m, key, hash_of(m, key));
}

bool map_remove(Map *m, MapNode *node) {
        if (m->n_buckets == 0)
                return false;
        for (MapNode **p = &m->buckets[bucket_of(node->hash, m->n_buckets)]; *p; p = &(*p)->next)
                if (*p == node) {
                        *p = node->next;
                        node->next = NULL;
                        m->n_nodes--;
                        return true;
                }
        return false;
}

size_t map_size(const Map *m) {
        return m->n_nodes;
}

void map_done(Map *m) {
        free(m->buckets);
        m->buckets = NULL;
        m->n_buckets = m->n_nodes = 0;
}

static MapNode *first_from(const Map *m, MapIter *i, size_t bucket) {
        for (i->bucket = bucket; i->bucket < m->n_buckets; i->bucket++)
                if (m->buckets[i->bucket]) {
                        MapNode *node = m->buckets[i->bucket];
                        i->next = node->next;
                        return node;
                }
        i->next = NULL;
        return NULL;
}

MapNode *map_first(const Map *m, MapIter *i) {
        return first_from(m, i, 0);
}

MapNode *map_next(const Map *m, MapIter *i) {
        if (i->next) {
                MapNode *node = i->next;
                i->next = node->next;
                return node;
        }
        return first_from(m, i, i->bucket + 1);
}
