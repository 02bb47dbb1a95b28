/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund starts every job's bgrun-supervisor itself, with posix_spawn, as
 * its own child in a new session, held: it waits for a byte on its go pipe
 * and touches nothing before it. job.c lets it go once its containment is
 * ready and verified. Readiness comes back over a second pipe
 * (supervisor-protocol.h): one byte once the command was exec'd and
 * run.json written (job_started()), another when the job's user cannot
 * enter its cwd (job_start_refused(), once the supervisor is gone), EOF
 * without either when setup failed (job_start_failed()).
 *
 * Most Launches take a supervisor started ahead of time from a small pool
 * (bgrun-supervisor --pooled, told its job over the go pipe): the same
 * process and pipes, minus its exec on the Launch's path.
 *
 * A pinned supervisor (the systemd mechanism moves it by PID) is bgrund's
 * unreaped child until supervisor_unpin(), so its PID cannot be recycled
 * while systemd moves it. */

#include <stdbool.h>
#include <sys/types.h>

#include "containment.h"
#include "pidref.h"

typedef struct Runtime Runtime;
typedef struct Job Job;

/* Spawn j's supervisor, held, as plan says; its pid in j->live->spawned_pid. */
int supervisor_spawn(Job *j, const SpawnPlan *plan);

/* Start supervisors ahead of time until the pool is full, once Launches
 * pause: called when one starts a supervisor and when its job runs, each
 * call putting the refill off again. */
void supervisor_pool_refill(Runtime *rt);

/* The mechanism is done with the PID of job_id's supervisor. */
void supervisor_unpin(Runtime *rt, const char *job_id);

/* Let the held supervisor go on: its containment is ready. From here on the
 * command may run, so a failure never falls back to another mechanism. */
int supervisor_let_go(Job *j);

/* Kill a held supervisor that will never be let go (through its pidfd) and
 * stop listening to it, before anything else starts the job. */
void supervisor_abort(Job *j);

/* The running supervisor of job_id, found by what it is: the supervisor
 * binary, run by bgrund's uid, with "--job job_id". 1 and a verified ref,
 * 0 when there is none. For a job whose run.json is lost. */
int supervisor_find(Runtime *rt, const char *job_id, PidRef *ret);

/* Reaping of spawned supervisors that are still bgrund's children; the
 * pool's idle ones are killed. */
void supervisor_children_free(Runtime *rt);
