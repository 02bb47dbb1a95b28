/* SPDX-License-Identifier: MIT */
#pragma once

/* What job-end.c gives job-start.c: a start that failed after its
 * supervisor published a result ends with it. */

#include "job.h"

/* End the job with res, its final result, taken over (its record then
 * fills the cache from memory, for the notifications). */
void job_end(Job *j, JobStatus status, JobResult *res);

/* The supervisor published res and exited (or died after publishing):
 * settle the grant and end. */
void job_end_with_result(Job *j, JobResult *res);
