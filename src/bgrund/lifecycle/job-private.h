/* SPDX-License-Identifier: MIT */
#pragma once

/* What job.c gives the lifecycle's files that start and end a job, not the
 * D-Bus face. */

#include "containment.h"
#include "job.h"
#include "job-live.h"
#include "runtime.h"

/* The mechanism a live job runs under. */
static inline Containment *job_containment(Job *j) {
        return runtime_containment(j->runtime, j->live->spec.mechanism);
}
