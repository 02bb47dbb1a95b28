/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "job-table.h"

static size_t hash_id(const char *id, size_t n_buckets) {
        /* FNV-1a; ids are random already, this just folds them. */
        uint64_t h = 1469598103934665603ULL;
        for (const char *p = id; *p; p++)
                h = (h ^ (unsigned char) *p) * 1099511628211ULL;
        return (size_t) (h & (n_buckets - 1));
}

static int grow(JobTable *t) {
        size_t n = t->n_buckets ? t->n_buckets * 2 : 64;
        Job **b = calloc(n, sizeof(Job *));
        if (!b)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_buckets; i++)
                for (Job *j = t->buckets[i], *next; j; j = next) {
                        next = j->table_next;
                        size_t h = hash_id(j->id, n);
                        j->table_next = b[h];
                        b[h] = j;
                }
        free(t->buckets);
        t->buckets = b;
        t->n_buckets = n;
        return 0;
}

int job_table_put(JobTable *t, Job *j) {
        if (t->n_jobs + 1 > t->n_buckets) {
                int r = grow(t);
                if (r < 0)
                        return r;
        }
        if (job_table_get(t, j->id))
                return -EEXIST;
        size_t h = hash_id(j->id, t->n_buckets);
        j->table_next = t->buckets[h];
        t->buckets[h] = j;
        t->n_jobs++;
        return 0;
}

Job *job_table_get(const JobTable *t, const char *id) {
        if (!t->n_buckets)
                return NULL;
        for (Job *j = t->buckets[hash_id(id, t->n_buckets)]; j; j = j->table_next)
                if (strcmp(j->id, id) == 0)
                        return j;
        return NULL;
}

Job *job_table_remove(JobTable *t, const char *id) {
        if (!t->n_buckets)
                return NULL;
        for (Job **p = &t->buckets[hash_id(id, t->n_buckets)]; *p; p = &(*p)->table_next)
                if (strcmp((*p)->id, id) == 0) {
                        Job *j = *p;
                        *p = j->table_next;
                        j->table_next = NULL;
                        t->n_jobs--;
                        return j;
                }
        return NULL;
}

void job_table_clear(JobTable *t) {
        free(t->buckets);
        *t = (JobTable) {};
}

Job *job_table_first(const JobTable *t, size_t *bucket) {
        for (*bucket = 0; *bucket < t->n_buckets; (*bucket)++)
                if (t->buckets[*bucket])
                        return t->buckets[*bucket];
        return NULL;
}

Job *job_table_next(const JobTable *t, size_t *bucket, Job *j) {
        if (j->table_next)
                return j->table_next;
        for ((*bucket)++; *bucket < t->n_buckets; (*bucket)++)
                if (t->buckets[*bucket])
                        return t->buckets[*bucket];
        return NULL;
}
