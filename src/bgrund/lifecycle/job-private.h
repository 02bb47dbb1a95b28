/* SPDX-License-Identifier: MIT */
#pragma once

/* What job.c and job-release.c share of a job's lifecycle, for them alone. */

#include "containment.h"
#include "job.h"

/* The mechanism a live job runs under. */
Containment *job_containment(Job *j);

/* End the job with res, its final result, taken over (its record then
 * fills the cache from memory, for the notifications). */
void job_end(Job *j, JobStatus status, JobResult *res);
/* The supervisor published res and exited (or died after publishing):
 * settle the grant and end. */
void job_end_with_result(Job *j, JobResult *res);
