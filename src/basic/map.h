/* SPDX-License-Identifier: MIT */
#pragma once

/* The one hash map (systemd's src/basic/hashmap.h is the model): chained,
 * intrusive, growing. An item carries a MapNode for each map it can be in,
 * so putting it in allocates nothing but, now and then, a bigger bucket
 * array, and taking it out is O(1) on a short chain. The hash is SipHash-2-4
 * with a key drawn at random once per process, so keys a caller chooses
 * cannot be made to collide.
 *
 * A map's MapType says what its key is: hash() feeds the key's fields to
 * the hash (map_feed_*), has_key() compares an item's key with one looked
 * up. Keys are whatever has_key() understands: a string, a number, a struct
 * of both. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "siphash24.h"

typedef struct MapNode {
        struct MapNode *next;
        uint64_t hash;
} MapNode;

typedef struct MapType {
        void (*hash)(const void *key, SipHash *state);
        bool (*has_key)(const MapNode *node, const void *key);
} MapType;

typedef struct Map {
        const MapType *type;
        MapNode **buckets;
        size_t n_buckets;
        size_t n_nodes;
} Map;

#define MAP_INIT(t) ((Map) { .type = (t) })

/* The item that holds node, as member of type. */
#define MAP_ITEM(node, type, member) ((type *) ((char *) (node) - offsetof(type, member)))

/* Puts node in under key (which must be the key has_key() finds in it):
 * -EEXIST if an item of that key is in already, -ENOMEM only when the map
 * has no buckets yet and none can be had (a map that cannot grow goes on
 * with longer chains). */
int map_put(Map *m, MapNode *node, const void *key);
MapNode *map_get(const Map *m, const void *key);
/* Takes node out; false if it was not in. */
bool map_remove(Map *m, MapNode *node);
size_t map_size(const Map *m);
/* Frees the buckets (the items are the caller's); the map is empty after. */
void map_done(Map *m);

/* Iteration in no particular order; the item at hand may be taken out:
 *   MapIter i; for (MapNode *n = map_first(m, &i); n; n = map_next(m, &i)) */
typedef struct MapIter {
        size_t bucket;
        MapNode *next;
} MapIter;
MapNode *map_first(const Map *m, MapIter *i);
MapNode *map_next(const Map *m, MapIter *i);

/* For MapType.hash. */
void map_feed_string(SipHash *state, const char *s);
void map_feed_u64(SipHash *state, uint64_t v);
/* A string's hash as the maps have it (keyed per process), for a set kept
 * as hashes alone. */
uint64_t map_hash_string(const char *s);
