/* SPDX-License-Identifier: MIT */
#pragma once

/* Containment backends behind one small table of operations, so the daemon
 * never branches on which one runs a job.
 *   systemd        a transient scope per job (systemd-unit.c): contained
 *   process_group  a detached supervisor, the job in its own session and
 *                  process group (process-group.c): NOT contained */

#include <stdbool.h>

#include "config.h"
#include "job-id.h"

typedef struct Daemon Daemon;
typedef struct Job Job;

typedef struct ContainmentBackend {
        Mechanism mechanism;
        bool contains; /* can kill everything the job creates and confirm it */
        /* Whether the backend can be used at all right now. */
        bool (*available)(Daemon *d);
        /* Start the job's supervisor asynchronously. On success the backend
         * later calls job_started() or job_start_failed(). */
        int (*start)(Job *j);
} ContainmentBackend;

extern const ContainmentBackend systemd_backend;
extern const ContainmentBackend process_group_backend;

const ContainmentBackend *containment_backend(Mechanism m);

/* systemd backend plumbing: Subscribe() and the JobRemoved match. */
int systemd_unit_setup(Daemon *d);

/* "bgrun-job-<id>.scope" */
int job_unit_name(const char *id, char **ret);
/* The id in "bgrun-job-<id>.scope"; false for any other name. */
bool job_id_from_unit_name(const char *unit, char ret[static JOB_ID_MAX]);
/* The slice every job's scope lives in, and its cgroup. */
#define JOB_SLICE "bgrun.slice"
#define JOB_SLICE_CGROUP "/" JOB_SLICE
/* The cgroup path of a job's unit, "/bgrun.slice/bgrun-job-<id>.scope". */
int job_unit_cgroup(const char *id, char **ret);
