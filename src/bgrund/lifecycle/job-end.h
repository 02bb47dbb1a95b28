/* SPDX-License-Identifier: MIT */
#pragma once

/* What job-end.c gives job-start.c and the runtime: a start that failed
 * after its supervisor published a result ends with it, and a job answered
 * queued ends with a record of its own when it never ran. */

#include "job.h"

/* End the job with res, its final result, taken over (its record then
 * fills the cache from memory, for the notifications). */
void job_end(Job *j, JobStatus status, JobResult *res);

/* The supervisor published res and exited (or died after publishing):
 * settle the grant and end. */
void job_end_with_result(Job *j, JobResult *res);

/* End j, which never ran (queued, or answered queued and failed to start):
 * status JOB_KILLED (taken out of its queue: method never-started) or
 * JOB_FAILED (error, a LAUNCH_* or -errno, names its failure; message says
 * why, or NULL for the error's words). */
void job_end_unstarted(Job *j, JobStatus status, int error, const char *message);
