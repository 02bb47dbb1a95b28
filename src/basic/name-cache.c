/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "name-cache.h"

static void name_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool name_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, NameSlot, node)->name, key);
}

static const MapType by_name = { .hash = name_hash, .has_key = name_is };

int name_cache_init(NameCache *c, size_t capacity) {
        *c = (NameCache) { .map = MAP_INIT(&by_name), .capacity = capacity };
        c->slots = calloc(capacity, sizeof(NameSlot));
        return c->slots ? 0 : -ENOMEM;
}

void name_cache_done(NameCache *c) {
        map_done(&c->map);
        free(c->slots);
        *c = (NameCache) {};
}

ssize_t name_cache_find(const NameCache *c, const char *name) {
        MapNode *node = c->slots ? map_get(&c->map, name) : NULL;
        return node ? MAP_ITEM(node, NameSlot, node) - c->slots : -1;
}

ssize_t name_cache_put(NameCache *c, const char *name) {
        ssize_t i = name_cache_find(c, name);
        if (i >= 0)
                return i;
        if (!c->slots || strlen(name) >= NAME_CACHE_NAME_MAX)
                return -1;
        NameSlot *slot = &c->slots[c->next];
        if (slot->name[0])
                (void) map_remove(&c->map, &slot->node);
        strcpy(slot->name, name);
        if (map_put(&c->map, &slot->node, slot->name) < 0) {
                slot->name[0] = 0;
                return -1;
        }
        i = (ssize_t) c->next;
        c->next = (c->next + 1) % c->capacity;
        return i;
}

void name_cache_forget(NameCache *c, const char *name) {
        ssize_t i = name_cache_find(c, name);
        if (i < 0)
                return;
        (void) map_remove(&c->map, &c->slots[i].node);
        c->slots[i].name[0] = 0;
}
