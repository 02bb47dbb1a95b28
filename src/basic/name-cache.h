/* SPDX-License-Identifier: MIT */
#pragma once

/* At most `capacity` short names (bus names: under NAME_CACHE_NAME_MAX
 * bytes), the oldest put in forgotten first, found in O(1) through the map.
 * What a name stands for lives in the caller's arrays, at the slot index
 * the cache answers: the cache holds only the names and their age. */

#include <stddef.h>
#include <sys/types.h>

#include "map.h"

#define NAME_CACHE_NAME_MAX 64

typedef struct NameSlot {
        MapNode node;
        char name[NAME_CACHE_NAME_MAX]; /* "" while free */
} NameSlot;

typedef struct NameCache {
        Map map;
        NameSlot *slots;
        size_t capacity;
        size_t next; /* the slot the next new name takes (the oldest once full) */
} NameCache;

int name_cache_init(NameCache *c, size_t capacity);
void name_cache_done(NameCache *c);
/* The slot of name, or -1. */
ssize_t name_cache_find(const NameCache *c, const char *name);
/* The slot of name, put in if new (the oldest name then forgotten), or -1
 * for a name too long to keep. */
ssize_t name_cache_put(NameCache *c, const char *name);
/* Forget name, if it is there. */
void name_cache_forget(NameCache *c, const char *name);
