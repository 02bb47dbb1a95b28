/* SPDX-License-Identifier: MIT */
#pragma once

/* Jobs by a key: a chained hash table that grows, so a lookup stays O(1) as
 * finished jobs pile up. Intrusive: a Job carries a chain pointer for each
 * table it can be in. Two keys: a job's id (every job, in Runtime.jobs),
 * and its owner with its RequestId (the jobs launched with one, in
 * Runtime.requests: "launch at most once" is a lookup there). */

#include <stddef.h>
#include <sys/types.h>

typedef struct Job Job;

typedef enum JobKey {
        JOB_KEY_ID,      /* Job.id */
        JOB_KEY_REQUEST, /* Job.owner and Job.request_id */
} JobKey;

typedef struct JobTable {
        JobKey key;
        Job **buckets;
        size_t n_buckets;
        size_t n_jobs;
} JobTable;

/* -EEXIST when a job of the same key is in t already. */
int job_table_put(JobTable *t, Job *j);
/* By id (a JOB_KEY_ID table). */
Job *job_table_get(const JobTable *t, const char *id);
/* By owner and RequestId (a JOB_KEY_REQUEST table). */
Job *job_table_get_request(const JobTable *t, uid_t owner, const char *request_id);
/* Take j out of t, if it is there. */
void job_table_remove(JobTable *t, Job *j);
void job_table_clear(JobTable *t);

/* Iterate: for (Job *j = job_table_first(t, &i); j; j = job_table_next(t, &i, j)) */
Job *job_table_first(const JobTable *t, size_t *bucket);
Job *job_table_next(const JobTable *t, size_t *bucket, Job *j);
