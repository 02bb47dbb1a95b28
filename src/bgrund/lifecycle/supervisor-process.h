/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund starts every job's bgrun-supervisor itself, with posix_spawn, as
 * its own child in a new session, held: it waits for a byte on its go pipe
 * and touches nothing before it. job-start.c lets it go once its
 * containment is ready and verified, and hears its readiness on a second
 * pipe (supervisor-protocol.h).
 *
 * Most Launches take a supervisor started ahead of time from a small pool
 * (bgrun-supervisor --pooled, told its job over its go socket): the same
 * process and pipes, minus its exec on the Launch's path; or, for a job to
 * be born in a cgroup, its child forked there (pooled.c).
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
typedef struct SpawnedChild SpawnedChild;

/* A new supervisor, held, with its two pipes: for job_id, or for the pool
 * (job_id NULL; its go channel a socket, supervisor-protocol.h). Born in
 * cgroup_fd when that is not -EBADF. On success the caller owns *ret_pidfd,
 * *ret_ready_fd (the readiness pipe's read end) and *ret_go_fd (the go
 * pipe's or socket's other end). */
int supervisor_spawn_process(Runtime *rt, const char *job_id, int cgroup_fd, pid_t *ret_pid, int *ret_pidfd,
                             int *ret_ready_fd, int *ret_go_fd);

/* Watch a dup of pidfd, the spawned supervisor of job_id ("" for an idle
 * one of the pool), pinned or not, reaping it once it exits (unpinned). */
int spawned_child_watch(Runtime *rt, int pidfd, const char *job_id, bool pin, SpawnedChild **ret);

/* Take an idle supervisor of the pool for j as plan says: -EAGAIN when
 * there is none, < 0 when it failed (it is then killed). Where plan has a
 * cgroup, the supervisor forks j's into it and leaves: bgrund waits for its
 * answer, from a process of its own that only forks. */
int supervisor_pool_take(Job *j, const SpawnPlan *plan, pid_t *ret_pid, int *ret_pidfd, int *ret_ready_fd,
                         int *ret_go_fd);

/* Start supervisors ahead of time until the pool is full, once Launches
 * pause: called when one starts a supervisor and when its job runs, each
 * call putting the refill off again. */
void supervisor_pool_refill(Runtime *rt);

/* A bgrun-supervisor --remove-placeholders for ended job_id, whose own
 * supervisor did not get to remove them (git-placeholders.h): it removes
 * them as the job's user, away from bgrund's loop, and is reaped here. */
int supervisor_spawn_cleanup(Runtime *rt, const char *job_id);

/* The mechanism is done with the PID of job_id's supervisor. */
void supervisor_unpin(Runtime *rt, const char *job_id);

/* The running supervisor of job_id, found by what it is: the supervisor
 * binary, run by bgrund's uid, with "--job job_id". 1 and a verified ref,
 * 0 when there is none. For a job whose run.json is lost. */
int supervisor_find(Runtime *rt, const char *job_id, PidRef *ret);

/* Reaping of spawned supervisors that are still bgrund's children; the
 * pool's idle ones are killed. */
void supervisor_children_free(Runtime *rt);
