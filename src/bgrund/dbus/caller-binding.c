/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "caller-binding.h"
#include "job.h"
#include "log.h"
#include "macro.h"

struct CallerName {
        MapNode node;
        char *name;
        CallerBound *jobs;
};

static void name_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool name_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, CallerName, node)->name, key);
}

static const MapType by_name = { .hash = name_hash, .has_key = name_is };

static CallerName *find(const CallerBindings *b, const char *name) {
        MapNode *node = b->names.type ? map_get(&b->names, name) : NULL;
        return node ? MAP_ITEM(node, CallerName, node) : NULL;
}

int caller_bindings_add(CallerBindings *b, Job *j, const char *name, bool *ret_new) {
        if (j->caller_bound)
                return -EALREADY;
        if (!b->names.type)
                b->names = MAP_INIT(&by_name);
        CallerName *c = find(b, name);
        bool new = !c;
        _cleanup_free_ CallerBound *bound = calloc(1, sizeof(CallerBound));
        if (!bound)
                return -ENOMEM;
        if (new) {
                c = calloc(1, sizeof(CallerName));
                if (!c || !(c->name = strdup(name))) {
                        free(c);
                        return -ENOMEM;
                }
                int r = map_put(&b->names, &c->node, c->name);
                if (r < 0) {
                        free(c->name);
                        free(c);
                        return r;
                }
        }
        bound->name = c;
        bound->job = j;
        bound->next = bound->name->jobs;
        if (bound->next)
                bound->next->prev = bound;
        bound->name->jobs = bound;
        j->caller_bound = TAKE_PTR(bound);
        if (ret_new)
                *ret_new = new;
        return 0;
}

static void name_free(CallerBindings *b, CallerName *c) {
        (void) map_remove(&b->names, &c->node);
        free(c->name);
        free(c);
}

void caller_bindings_remove(CallerBindings *b, Job *j) {
        CallerBound *bound = j->caller_bound;
        if (!bound)
                return;
        j->caller_bound = NULL;
        if (bound->prev)
                bound->prev->next = bound->next;
        else
                bound->name->jobs = bound->next;
        if (bound->next)
                bound->next->prev = bound->prev;
        /* A name with no job left is not kept: the table holds bound jobs only. */
        if (!bound->name->jobs)
                name_free(b, bound->name);
        free(bound);
}

unsigned caller_bindings_gone(CallerBindings *b, const char *name) {
        CallerName *c = find(b, name);
        if (!c)
                return 0;
        (void) map_remove(&b->names, &c->node);
        unsigned n = 0;
        for (CallerBound *bound = c->jobs, *next; bound; bound = next) {
                next = bound->next;
                Job *j = bound->job;
                j->caller_bound = NULL;
                free(bound);
                if (job_is_ended(j) || !j->live)
                        continue;
                log_info("Job %s: the connection that launched it (%s) closed; stopping it", j->id, name);
                job_stop(j, j->live->spec.stop_signal, j->live->spec.stop_grace_usec);
                n++;
        }
        free(c->name);
        free(c);
        return n;
}

bool caller_bindings_has(const CallerBindings *b, const char *name) {
        return find(b, name);
}

void caller_bindings_clear(CallerBindings *b) {
        MapIter it;
        for (MapNode *node = map_first(&b->names, &it); node; node = map_next(&b->names, &it)) {
                CallerName *c = MAP_ITEM(node, CallerName, node);
                for (CallerBound *bound = c->jobs, *n; bound; bound = n) {
                        n = bound->next;
                        free(bound);
                }
                free(c->name);
                free(c);
        }
        map_done(&b->names);
        *b = (CallerBindings) {};
}
