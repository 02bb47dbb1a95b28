/* SPDX-License-Identifier: MIT */
#pragma once

/* What job.c gives the lifecycle's files that start and end a job, not the
 * D-Bus face. */

#include "containment.h"
#include "job.h"
#include "runtime.h"

/* The mechanism a live job runs under. */
static inline Containment *job_containment(Job *j) {
        return runtime_containment(j->runtime, j->live->spec.mechanism);
}

/* Drop what only a live job needs (its end, its discard). */
void job_release_live_state(Job *j);
