/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund starts every job's bgrun-supervisor itself, with posix_spawn, as
 * its own child in a new session. Readiness comes back over a pipe: one byte
 * once the command was exec'd and run.json written (job_started()), EOF
 * without it when setup failed (job_start_failed()).
 *
 * A held supervisor (the systemd mechanism) first waits for a byte on a
 * second pipe and touches nothing before it: bgrund lets it go once systemd
 * has moved it into the job's scope. Because it is bgrund's unreaped child
 * until then, its PID cannot be recycled while systemd moves it by PID. */

#include <stdbool.h>
#include <sys/types.h>

typedef struct Daemon Daemon;
typedef struct Job Job;

/* Spawn j's supervisor, held; its pid in *ret_pid. With pin, it is not
 * reaped (its PID not freed) before supervisor_unpin(), even if it dies. */
int supervisor_spawn(Job *j, bool pin, pid_t *ret_pid);

/* systemd is done with the PID of job_id's supervisor: it was moved into the
 * scope, or will never be. */
void supervisor_unpin(Daemon *d, const char *job_id);

/* Let the held supervisor go on: its containment is ready. From here on the
 * command may run, so a failure never falls back to another mechanism. */
int supervisor_let_go(Job *j);

/* Kill a held supervisor that will never be let go (through its pidfd) and
 * stop listening to it, before anything else starts the job. */
void supervisor_abort(Job *j);

/* Reaping of spawned supervisors that are still bgrund's children. */
void supervisor_children_free(Daemon *d);
