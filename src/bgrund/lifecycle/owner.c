/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "owner.h"

static void uid_hash(const void *key, SipHash *state) {
        map_feed_u64(state, *(const uid_t *) key);
}

static bool uid_is(const MapNode *node, const void *key) {
        return MAP_ITEM(node, Owner, node)->uid == *(const uid_t *) key;
}

static const MapType by_uid = { .hash = uid_hash, .has_key = uid_is };

static Owner *owner_of(MapNode *node) {
        return node ? MAP_ITEM(node, Owner, node) : NULL;
}

Owner *owner_get(OwnerTable *t, uid_t uid) {
        return owner_of(map_get(&t->owners, &uid));
}

int owner_get_or_add(OwnerTable *t, uid_t uid, Owner **ret) {
        if (!t->owners.type)
                t->owners = MAP_INIT(&by_uid);
        Owner *o = owner_get(t, uid);
        if (!o) {
                o = calloc(1, sizeof(Owner));
                if (!o)
                        return -ENOMEM;
                o->uid = uid;
                int r = map_put(&t->owners, &o->node, &o->uid);
                if (r < 0) {
                        free(o);
                        return r;
                }
        }
        *ret = o;
        return 0;
}

Owner *owner_first(OwnerTable *t, MapIter *i) {
        return owner_of(map_first(&t->owners, i));
}

Owner *owner_next(OwnerTable *t, MapIter *i) {
        return owner_of(map_next(&t->owners, i));
}

void owner_table_clear(OwnerTable *t) {
        MapIter it;
        for (Owner *o = owner_first(t, &it); o; o = owner_next(t, &it)) {
                map_done(&o->sessions);
                free(o);
        }
        map_done(&t->owners);
}
