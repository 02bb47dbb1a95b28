/* SPDX-License-Identifier: MIT */
/* The queue's bookkeeping (job-queue.h): session groups, owners' queues,
 * the room a launch or a queued job has, and the owners to look at. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "job-queue.h"
#include "macro.h"
#include "runtime.h"

/* --- session groups, by name in their owner ---------------------------- */

static void name_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool name_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, SessionGroup, node)->name, key);
}

static const MapType by_name = { .hash = name_hash, .has_key = name_is };

static SessionGroup *group_get(Owner *o, const char *name) {
        MapNode *n = o && o->sessions.type ? map_get(&o->sessions, name) : NULL;
        return n ? MAP_ITEM(n, SessionGroup, node) : NULL;
}

static void group_free(SessionGroup *g) {
        (void) map_remove(&g->owner->sessions, &g->node);
        free(g->name);
        free(g);
}

/* j's MaxParallel becomes g's limit if j is its newest launch that names
 * one (a restart joins them oldest first). */
static void limit_take(Runtime *rt, SessionGroup *g, const Job *j) {
        if (j->max_parallel == 0 || j->created_at < g->limit_at)
                return;
        uint32_t old = g->limit;
        g->limit = j->max_parallel;
        g->limit_at = j->created_at;
        /* Risen: queued jobs of the session may start now. */
        if (old != 0 && g->limit > old && g->owner->n_queued > 0)
                queue_wake(rt, g->owner);
}

int queue_join(Runtime *rt, Job *j) {
        Owner *o = j->account;
        assert(o && !j->group && !job_is_ended(j));
        SessionGroup *g = group_get(o, j->session_id);
        if (!g) {
                if (!o->sessions.type)
                        o->sessions = MAP_INIT(&by_name);
                g = calloc(1, sizeof(SessionGroup));
                if (!g || !(g->name = strdup(j->session_id))) {
                        free(g);
                        return -ENOMEM;
                }
                g->owner = o;
                int r = map_put(&o->sessions, &g->node, g->name);
                if (r < 0) {
                        free(g->name);
                        free(g);
                        return r;
                }
        }
        j->group = g;
        QUEUE_APPEND(group, g->members, j);
        limit_take(rt, g, j);
        if (job_is_queued(j)) {
                QUEUE_APPEND(queued, o->queued, j);
                o->n_queued++;
                g->queued++;
        }
        return 0;
}

void queue_remove(Runtime *rt, Job *j) {
        Owner *o = j->account;
        if (!o)
                return;
        QUEUE_REMOVE(queued, o->queued, j);
        o->n_queued--;
        if (j->group)
                j->group->queued--;
}

void queue_leave(Runtime *rt, Job *j) {
        SessionGroup *g = j->group;
        if (!g)
                return;
        if (job_is_queued(j))
                queue_remove(rt, j);
        QUEUE_REMOVE(group, g->members, j);
        j->group = NULL;
        /* Its limit stays with the group, which goes with its last job. */
        if (!g->members.head)
                group_free(g);
}

void queue_count_running(Job *j, bool on) {
        SessionGroup *g = j->group;
        if (!g)
                return;
        if (on)
                g->running++;
        else
                g->running--;
}

/* --- room ----------------------------------------------------------------- */

/* The limit a job of MaxParallel v meets in g (NULL: a session with no
 * live job), 0 for none: its own, which replaces the session's, or the
 * session's. */
static uint32_t session_limit(const SessionGroup *g, uint32_t v) {
        return v != 0 ? v : g ? g->limit : 0;
}

int queue_check_room(Runtime *rt, const JobSpec *spec, uint64_t *ret_limit) {
        Owner *o = owner_get(&rt->owners, spec->owner);
        uint64_t max_running = rt->config.limits.max_running_jobs;
        if (o && o->running >= max_running) {
                *ret_limit = max_running;
                return BGRUN_ERROR(TOO_MANY_RUNNING);
        }
        SessionGroup *g = group_get(o, spec->session_id);
        uint32_t limit = session_limit(g, spec->max_parallel);
        if (limit != 0 && (g ? g->running : 0) >= limit) {
                *ret_limit = limit;
                return BGRUN_ERROR(TOO_MANY_PARALLEL);
        }
        return 0;
}

bool queue_may_start(Runtime *rt, const Job *j) {
        const SessionGroup *g = j->group;
        uint32_t limit = g ? g->limit : 0; /* the newest launch's, its own or inherited */
        return j->account->running < rt->config.limits.max_running_jobs && (limit == 0 || g->running < limit);
}

SessionGroup *queue_session(Runtime *rt, uid_t owner, const char *session) {
        return group_get(owner_get(&rt->owners, owner), session);
}

unsigned queue_position(const Job *j) {
        if (!job_is_queued(j) || !j->account)
                return 0;
        unsigned n = 1;
        for (const Job *k = j->account->queued.head; k && k != j; k = k->queued_next)
                n++;
        return n;
}

/* --- owners to look at --------------------------------------------------- */

void queue_wake(Runtime *rt, Owner *o) {
        if (!o->ready) {
                QUEUE_APPEND(ready, rt->ready_owners, o);
                o->ready = true;
        }
        if (rt->queue_source)
                (void) sd_event_source_set_enabled(rt->queue_source, SD_EVENT_ONESHOT);
}

void queue_unready(Runtime *rt, Owner *o) {
        if (!o->ready)
                return;
        QUEUE_REMOVE(ready, rt->ready_owners, o);
        o->ready = false;
}

void queue_clear(Runtime *rt) {
        while (rt->ready_owners.head)
                queue_unready(rt, rt->ready_owners.head);
        rt->queue_source = sd_event_source_disable_unref(rt->queue_source);
        MapIter i;
        for (Owner *o = owner_first(&rt->owners, &i); o; o = owner_next(&rt->owners, &i)) {
                MapIter k;
                for (MapNode *n = map_first(&o->sessions, &k); n; n = map_next(&o->sessions, &k))
                        group_free(MAP_ITEM(n, SessionGroup, node));
        }
}
