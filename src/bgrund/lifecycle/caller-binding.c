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
        CallerName *hash_next;
        char *name;
        CallerBound *jobs;
};

static size_t hash_name(const char *name, size_t n_buckets) {
        uint64_t h = 1469598103934665603ULL;
        for (const char *p = name; *p; p++)
                h = (h ^ (unsigned char) *p) * 1099511628211ULL;
        return (size_t) (h % n_buckets);
}

static CallerName **find_slot(const CallerBindings *b, const char *name) {
        if (b->n_buckets == 0)
                return NULL;
        CallerName **p = &b->buckets[hash_name(name, b->n_buckets)];
        for (; *p; p = &(*p)->hash_next)
                if (streq((*p)->name, name))
                        return p;
        return p;
}

/* Twice the buckets once there are more names than buckets: chains stay short. */
static int grow(CallerBindings *b) {
        if (b->n_names < b->n_buckets)
                return 0;
        size_t n = b->n_buckets ? b->n_buckets * 2 : 64;
        CallerName **buckets = calloc(n, sizeof(CallerName *));
        if (!buckets)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_buckets; i++)
                for (CallerName *c = b->buckets[i], *next; c; c = next) {
                        next = c->hash_next;
                        size_t h = hash_name(c->name, n);
                        c->hash_next = buckets[h];
                        buckets[h] = c;
                }
        free(b->buckets);
        b->buckets = buckets;
        b->n_buckets = n;
        return 0;
}

int caller_bindings_add(CallerBindings *b, Job *j, const char *name, bool *ret_new) {
        if (j->caller_bound)
                return -EALREADY;
        int r = grow(b);
        if (r < 0)
                return r;
        CallerName **slot = find_slot(b, name);
        bool new = !*slot;
        _cleanup_free_ CallerBound *bound = calloc(1, sizeof(CallerBound));
        if (!bound)
                return -ENOMEM;
        if (new) {
                CallerName *c = calloc(1, sizeof(CallerName));
                if (!c || !(c->name = strdup(name))) {
                        free(c);
                        return -ENOMEM;
                }
                *slot = c;
                b->n_names++;
        }
        bound->name = *slot;
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
        CallerName **slot = find_slot(b, c->name);
        if (slot && *slot == c) {
                *slot = c->hash_next;
                b->n_names--;
        }
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
        CallerName **slot = find_slot(b, name);
        if (!slot || !*slot)
                return 0;
        CallerName *c = *slot;
        *slot = c->hash_next;
        b->n_names--;
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
        CallerName **slot = find_slot(b, name);
        return slot && *slot;
}

void caller_bindings_clear(CallerBindings *b) {
        for (size_t i = 0; i < b->n_buckets; i++)
                for (CallerName *c = b->buckets[i], *next; c; c = next) {
                        next = c->hash_next;
                        for (CallerBound *bound = c->jobs, *n; bound; bound = n) {
                                n = bound->next;
                                free(bound);
                        }
                        free(c->name);
                        free(c);
                }
        free(b->buckets);
        *b = (CallerBindings) {};
}
