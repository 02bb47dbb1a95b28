/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "job-table.h"

/* FNV-1a of the owner (for requests) and the key string; ids are random
 * already, a RequestId is the caller's, and the chains grow with the table
 * either way. */
static size_t hash_key(uid_t owner, const char *s, size_t n_buckets) {
        uint64_t h = 1469598103934665603ULL;
        for (unsigned i = 0; i < sizeof owner; i++)
                h = (h ^ ((owner >> (8 * i)) & 0xff)) * 1099511628211ULL;
        for (const char *p = s; *p; p++)
                h = (h ^ (unsigned char) *p) * 1099511628211ULL;
        return (size_t) (h & (n_buckets - 1));
}

static Job **link_of(const JobTable *t, Job *j) {
        return t->key == JOB_KEY_ID ? &j->table_next : &j->request_next;
}

static size_t bucket_of(const JobTable *t, const Job *j, size_t n_buckets) {
        return t->key == JOB_KEY_ID ? hash_key(0, j->id, n_buckets) : hash_key(j->owner, j->request_id, n_buckets);
}

static int grow(JobTable *t) {
        size_t n = t->n_buckets ? t->n_buckets * 2 : 64;
        Job **b = calloc(n, sizeof(Job *));
        if (!b)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_buckets; i++)
                for (Job *j = t->buckets[i], *next; j; j = next) {
                        next = *link_of(t, j);
                        size_t h = bucket_of(t, j, n);
                        *link_of(t, j) = b[h];
                        b[h] = j;
                }
        free(t->buckets);
        t->buckets = b;
        t->n_buckets = n;
        return 0;
}

int job_table_put(JobTable *t, Job *j) {
        if (t->key == JOB_KEY_REQUEST && !j->request_id)
                return -EINVAL;
        if (t->n_jobs + 1 > t->n_buckets) {
                int r = grow(t);
                if (r < 0)
                        return r;
        }
        if (t->key == JOB_KEY_ID ? job_table_get(t, j->id) : job_table_get_request(t, j->owner, j->request_id))
                return -EEXIST;
        size_t h = bucket_of(t, j, t->n_buckets);
        *link_of(t, j) = t->buckets[h];
        t->buckets[h] = j;
        t->n_jobs++;
        return 0;
}

Job *job_table_get(const JobTable *t, const char *id) {
        if (!t->n_buckets || t->key != JOB_KEY_ID)
                return NULL;
        for (Job *j = t->buckets[hash_key(0, id, t->n_buckets)]; j; j = j->table_next)
                if (strcmp(j->id, id) == 0)
                        return j;
        return NULL;
}

Job *job_table_get_request(const JobTable *t, uid_t owner, const char *request_id) {
        if (!t->n_buckets || t->key != JOB_KEY_REQUEST)
                return NULL;
        for (Job *j = t->buckets[hash_key(owner, request_id, t->n_buckets)]; j; j = j->request_next)
                if (j->owner == owner && strcmp(j->request_id, request_id) == 0)
                        return j;
        return NULL;
}

void job_table_remove(JobTable *t, Job *j) {
        if (!t->n_buckets || (t->key == JOB_KEY_REQUEST && !j->request_id))
                return;
        for (Job **p = &t->buckets[bucket_of(t, j, t->n_buckets)]; *p; p = link_of(t, *p))
                if (*p == j) {
                        *p = *link_of(t, j);
                        *link_of(t, j) = NULL;
                        t->n_jobs--;
                        return;
                }
}

void job_table_clear(JobTable *t) {
        free(t->buckets);
        *t = (JobTable) { .key = t->key };
}

Job *job_table_first(const JobTable *t, size_t *bucket) {
        for (*bucket = 0; *bucket < t->n_buckets; (*bucket)++)
                if (t->buckets[*bucket])
                        return t->buckets[*bucket];
        return NULL;
}

Job *job_table_next(const JobTable *t, size_t *bucket, Job *j) {
        Job *next = *link_of(t, j);
        if (next)
                return next;
        for ((*bucket)++; *bucket < t->n_buckets; (*bucket)++)
                if (t->buckets[*bucket])
                        return t->buckets[*bucket];
        return NULL;
}
