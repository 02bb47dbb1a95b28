/* SPDX-License-Identifier: MIT */
#pragma once

/* Kill's own path for a job in a cgroup (job-kill.c). */

#include "job.h"

/* Kill j's payload cgroup itself and answer at its confirmation; < 0 when
 * that path is not open (no cgroup, the supervisor decided the end already,
 * nothing left to kill): the supervisor is told then. */
int job_kill_direct(Job *j);
/* Stopping that path, if under way, is job_kill_direct_done() (job-live.h). */
