/* SPDX-License-Identifier: MIT */
#pragma once

/* Jobs by a key, over the one map (basic/map.h), so a lookup stays O(1) as
 * finished jobs pile up. A Job carries a node for each table it can be in.
 * Two keys: a job's id (every job, in Runtime.jobs), and its owner with its
 * RequestId (the jobs launched with one, in Runtime.requests: "launch at
 * most once" is a lookup there). */

#include <stddef.h>
#include <sys/types.h>

#include "map.h"

typedef struct Job Job;

typedef enum JobKey {
        JOB_KEY_ID,      /* Job.id */
        JOB_KEY_REQUEST, /* Job.owner and Job.request_id */
} JobKey;

typedef struct JobTable {
        JobKey key;
        Map map;
} JobTable;

void job_table_init(JobTable *t, JobKey key);
/* -EEXIST when a job of the same key is in t already. */
int job_table_put(JobTable *t, Job *j);
/* By id (a JOB_KEY_ID table). */
Job *job_table_get(const JobTable *t, const char *id);
/* By owner and RequestId (a JOB_KEY_REQUEST table). */
Job *job_table_get_request(const JobTable *t, uid_t owner, const char *request_id);
/* Take j out of t, if it is there. */
void job_table_remove(JobTable *t, Job *j);
size_t job_table_size(const JobTable *t);
void job_table_clear(JobTable *t);

/* Iterate (j may be taken out on the way):
 *   JobTableIter i; for (Job *j = job_table_first(t, &i); j; j = job_table_next(t, &i)) */
typedef MapIter JobTableIter;
Job *job_table_first(const JobTable *t, JobTableIter *i);
Job *job_table_next(const JobTable *t, JobTableIter *i);
