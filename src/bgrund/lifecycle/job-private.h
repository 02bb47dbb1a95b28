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
/* Settle j's end from outside as t says (its slot says so durably): its
 * status and teardown are final, and the notifier is told. */
void job_confirm(Job *j, const JobTeardown *t);

/* Kill j's payload cgroup itself and answer at its confirmation
 * (job-kill.c); < 0 when that path is not open (no cgroup, the supervisor
 * decided the end already, nothing left to kill): the supervisor is told
 * then. */
int job_kill_direct(Job *j);
/* Stop that path, if under way. */
void job_kill_direct_done(JobLive *l);

/* The supervisor published res and exited (or died after publishing):
 * settle the grant and end. */
void job_end_with_result(Job *j, JobResult *res);
