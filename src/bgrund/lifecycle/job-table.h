/* SPDX-License-Identifier: MIT */
#pragma once

/* Jobs by id: a chained hash table that grows, so a lookup stays O(1) as
 * finished jobs pile up. Intrusive: a Job carries its own chain pointer. */

#include <stddef.h>

typedef struct Job Job;

typedef struct JobTable {
        Job **buckets;
        size_t n_buckets;
        size_t n_jobs;
} JobTable;

int job_table_put(JobTable *t, Job *j);
Job *job_table_get(const JobTable *t, const char *id);
Job *job_table_remove(JobTable *t, const char *id);
void job_table_clear(JobTable *t);

/* Iterate: for (Job *j = job_table_first(t, &i); j; j = job_table_next(t, &i, j)) */
Job *job_table_first(const JobTable *t, size_t *bucket);
Job *job_table_next(const JobTable *t, size_t *bucket, Job *j);
