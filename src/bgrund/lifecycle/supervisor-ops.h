/* SPDX-License-Identifier: MIT */
#pragma once

/* What the lifecycle asks of whoever starts a job's bgrun-supervisor
 * (spawn/: supervisor_spawn_ops). The lifecycle owns this table and runs
 * through the one runtime_new() was given, so that spawn/ builds on the
 * lifecycle (Job, Runtime, job_started()) and the lifecycle includes nothing
 * of spawn/. */

#include "containment.h"
#include "pidref.h"

typedef struct Runtime Runtime;
typedef struct Job Job;

typedef struct SupervisorOps {
        /* Spawn j's supervisor, held, as plan says; its pid in
         * j->live->spawned_pid. */
        int (*spawn)(Job *j, const SpawnPlan *plan);
        /* Start supervisors ahead of time until the pool is full, once
         * Launches pause: called when one starts a supervisor and when its
         * job runs, each call putting the refill off again. */
        void (*pool_refill)(Runtime *rt);
        /* The mechanism is done with the PID of job_id's supervisor. */
        void (*unpin)(Runtime *rt, const char *job_id);
        /* Let the held supervisor go on: its containment is ready. From here
         * on the command may run, so a failure never falls back to another
         * mechanism. */
        int (*let_go)(Job *j);
        /* Kill a held supervisor that will never be let go (through its
         * pidfd) and stop listening to it, before anything else starts the
         * job. */
        void (*abort)(Job *j);
        /* The running supervisor of job_id, found by what it is: the
         * supervisor binary, run by bgrund's uid, with "--job job_id". 1 and
         * a verified ref, 0 when there is none. For a job whose run.json is
         * lost. */
        int (*find)(Runtime *rt, const char *job_id, PidRef *ret);
        /* Reaping of spawned supervisors that are still bgrund's children;
         * the pool's idle ones are killed. */
        void (*children_free)(Runtime *rt);
} SupervisorOps;
