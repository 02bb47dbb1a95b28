/* SPDX-License-Identifier: MIT */
#pragma once

/* The teardown slot, <state>/jobs/<id>/teardown: where whoever confirmed
 * the teardown of a job ended from outside writes the status and the
 * teardown, durably, before anyone is told: bgrund for a Kill it does
 * itself (it kills the payload's cgroup and watches it empty), the
 * supervisor for a Stop's or a wall-clock limit's end, or a Kill that came
 * after it decided. Kill answers from it (job-store.h has the crash model).
 * The job's result.json repeats both once the end's own fields are known,
 * and nobody ever writes the slot again.
 *
 * The slot is made empty with the record, before the spec's sync, so its
 * directory entry is as durable as spec.json's, and given its block while
 * the job runs (job_teardown_prepare()); the write is one pwrite()
 * of JOB_TEARDOWN_SLOT_SIZE bytes at offset 0 (the JSON, then zeros) and an
 * fdatasync(). The JSON stays far below one sector: a power loss leaves
 * either all of it or none (a slot empty, all zeros, or unparseable holds
 * no teardown; nobody was told of one then). */

#include <stdbool.h>
#include <stdint.h>

#include "job-record.h"

#define JOB_TEARDOWN_FILE "teardown"
#define JOB_TEARDOWN_SLOT_SIZE 4096

/* A job's end as its teardown's confirmation fixed it. */
typedef struct JobTeardown {
        JobStatus status;      /* killed or timed_out */
        bool dead;             /* confirmed (false: known to have failed) */
        TeardownMethod method;
        uint64_t confirmed_at; /* 0 unless dead */
} JobTeardown;

int job_teardown_to_json(const JobTeardown *t, char **ret);
/* -EBADMSG for anything but a whole slot's JSON; -EPROTONOSUPPORT for a
 * newer format. */
int job_teardown_from_json(const char *json, JobTeardown *ret);

/* Who decides an end from outside holds the slot's lock (flock) from the
 * decision until the slot says it or the job's record does: bgrund while
 * it kills a job's payload itself (never waiting for the lock: the
 * supervisor holding it decided already), the supervisor from the moment
 * it decides how the job ends until it exits (waiting for bgrund, then
 * taking bgrund's word from the slot). wait: block until it is free; else
 * -EAGAIN when it is not; -ENOENT for a job without a slot (older than
 * slots: nobody locks). Returns the fd that holds the lock. */
int job_teardown_lock(int dir_fd, bool wait, int *ret_fd);

/* Make the job's empty slot if it has none (an existing one is kept). */
int job_teardown_create_slot(int dir_fd);
/* Give the slot its block, zeros, durably, while the job runs: a write of
 * a teardown then only overwrites it (no allocation, no journal commit
 * before the answer). Under the lock, never waiting for it: -EAGAIN while
 * someone ends the job. 0 also when there is nothing to do. */
int job_teardown_prepare(int dir_fd);
/* Write t into the job's slot and make it durable. */
int job_teardown_write(int dir_fd, const JobTeardown *t);
/* The slot's teardown: -ENOENT when there is none (no slot, an empty one,
 * or what a write interrupted by a power loss left), -EBADMSG or
 * -EPROTONOSUPPORT for a slot written whole but unreadable. */
int job_teardown_read(int dir_fd, JobTeardown *ret);
