/* SPDX-License-Identifier: MIT */
#pragma once

/* What the journal is told about jobs: one structured entry per event, with
 * a MESSAGE_ID per kind, the job's id and owner, and its unit as systemd's
 * convention for messages about another unit has it (OBJECT_SYSTEMD_UNIT=,
 * or OBJECT_SYSTEMD_USER_UNIT= from a user's instance), so that
 * `journalctl BGRUN_JOB_ID=ID` and `journalctl -u bgrun-job-ID.scope` find
 * them. Never the command, the cwd or the environment: the journal is
 * readable by more users than the job's record. */

#include <sys/types.h>

#include "job.h"

#define BGRUN_MESSAGE_JOB_STARTED "9fdf37f206bb4aedbc24e70e21386e6a"
#define BGRUN_MESSAGE_JOB_ENDED   "7d3c16c7927c4757979d09df086dc9a7" /* exited, failed or timed out */
#define BGRUN_MESSAGE_JOB_KILLED  "cd656152900944e1876860d681a03d72"
#define BGRUN_MESSAGE_JOB_STOPPED "d663d5847ed14122a577a86b19d48dab"
#define BGRUN_MESSAGE_JOB_REFUSED "9f34c8180730401a8ff9ceb1354c7e92" /* no containment: nothing ran */
#define BGRUN_MESSAGE_LIMIT_HIT   "ddcc6a34e4044019beb108c790c8b5d3" /* a [Limits] key refused or forgot something */

/* The job runs inside its containment. */
void job_log_started(const Job *j);
/* Its end, before its live state goes: res is its result. */
void job_log_ended(const Job *j, JobStatus status, const JobResult *res);
/* It never ran: no mechanism could contain it (error as job_discard's). */
void job_log_refused(const Job *j, int error, const char *message);
/* Enforcing mode found no containing mechanism at Launch: nothing was created. */
void job_log_launch_refused(uid_t owner);
/* A limit: a Launch refused (job NULL), or a record forgotten (job). */
void job_log_limit(uid_t owner, const Job *j, const char *limit, unsigned long long value);
