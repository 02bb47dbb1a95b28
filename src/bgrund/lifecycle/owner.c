/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "owner.h"

static Owner **bucket(OwnerTable *t, uid_t uid) {
        return &t->buckets[(uid * 2654435761u) % ELEMENTSOF(t->buckets)];
}

Owner *owner_get(OwnerTable *t, uid_t uid) {
        for (Owner *o = *bucket(t, uid); o; o = o->next)
                if (o->uid == uid)
                        return o;
        return NULL;
}

int owner_get_or_add(OwnerTable *t, uid_t uid, Owner **ret) {
        Owner *o = owner_get(t, uid);
        if (!o) {
                o = calloc(1, sizeof(Owner));
                if (!o)
                        return -ENOMEM;
                o->uid = uid;
                o->next = *bucket(t, uid);
                *bucket(t, uid) = o;
        }
        *ret = o;
        return 0;
}

void owner_table_clear(OwnerTable *t) {
        for (size_t i = 0; i < ELEMENTSOF(t->buckets); i++)
                while (t->buckets[i]) {
                        Owner *o = t->buckets[i];
                        t->buckets[i] = o->next;
                        free(o);
                }
}
