/* SPDX-License-Identifier: MIT */
#pragma once

/* What supervisor-spawn.c and supervisor-pool.c share, for them alone. */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "job-record.h"
#include "runtime.h"

/* A spawned supervisor that is still bgrund's child, reaped as soon as its
 * pidfd says it exited, whichever way its job ended (or whether bgrund still
 * knows the job at all), so no zombie stays behind.
 *
 * Except while it is pinned: systemd may still move its PID into a scope
 * (StartTransientUnit with PIDs=), and a reaped PID could by then belong to
 * someone else. An exited pinned child stays a zombie, holding its PID,
 * until supervisor_unpin() says systemd is done with it. */
typedef struct SpawnedChild {
        struct SpawnedChild *next, *prev;
        Runtime *runtime;
        sd_event_source *source;
        char job_id[JOB_ID_MAX];
        bool pinned, exited;
        /* Idle in the pool, with no job yet: its pid and the two pipes'
         * ends that the job takes over. */
        bool pooled;
        pid_t pid;
        int ready_fd, go_fd;
} SpawnedChild;

/* Watch a dup of pidfd, the spawned supervisor of job_id ("" for an idle
 * one of the pool), pinned or not, reaping it once it exits (unpinned). */
int spawned_child_watch(Runtime *rt, int pidfd, const char *job_id, bool pin, SpawnedChild **ret);
void spawned_child_free(SpawnedChild *c);

/* A new supervisor, held, with its two pipes: for job_id, or for the pool
 * (job_id NULL). Born in cgroup_fd when that is not -EBADF. On success the
 * caller owns *ret_pidfd, *ret_ready_fd (the readiness pipe's read end) and
 * *ret_go_fd (the go pipe's write end). */
int supervisor_spawn_process(Runtime *rt, const char *job_id, int cgroup_fd, pid_t *ret_pid, int *ret_pidfd,
                             int *ret_ready_fd, int *ret_go_fd);

/* The pool (supervisor-pool.c). Take an idle supervisor for j as plan says:
 * -EAGAIN when there is none, < 0 when it failed (it is then killed). */
int supervisor_pool_take(Job *j, const SpawnPlan *plan, pid_t *ret_pid, int *ret_pidfd, int *ret_ready_fd,
                         int *ret_go_fd);
/* c is no longer idle in the pool (taken, or gone): its pipes are closed. */
void supervisor_pool_forget(SpawnedChild *c);
/* Kill and reap the idle ones, and free the pool. */
void supervisor_pool_free(Runtime *rt);
