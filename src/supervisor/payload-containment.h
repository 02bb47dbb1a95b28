/* SPDX-License-Identifier: MIT */
#pragma once

/* The supervisor's side of a job's containment, behind one table of
 * operations, so that supervise.c never asks which mechanism runs the job:
 *   cgroup        payload-cgroup.c, for every mechanism that contains: the
 *                 supervisor in <job cgroup>/supervisor, the command in
 *                 <job cgroup>/payload, killed as a whole by cgroup.kill
 *   process tree  payload-process-tree.c, for process_group: the command's
 *                 tree below the supervisor (a child subreaper), killed
 *                 through pidfds; not containment
 * What both need (signals, the subreaper, the fork) stays in supervise.c. */

#include "job-record.h"
#include "job-usage.h"
#include "macro.h"
#include "mechanism.h"
#include "pidref.h"

/* How long a teardown may take to be confirmed before the job is recorded
 * as not dead (and its grant stays open for bgrund's reaper). */
#define TEARDOWN_TIMEOUT_USEC (10 * USEC_PER_SEC)

typedef struct PayloadContainment PayloadContainment;

typedef struct PayloadContainmentOps {
        const char *name;
        /* What confirm_empty() does, for the record. */
        TeardownMethod teardown_method;
        /* An end from outside is answered once confirmed (the teardown
         * slot), before the rest of the result is known; the process tree,
         * which is no containment, answers at the result. */
        bool answers_at_confirmation;
        /* Before the fork, with the job's directory. On failure *ret_step
         * says what failed, for the record. */
        int (*setup)(PayloadContainment *c, int dir_fd, const char **ret_step);
        /* The cgroup the command is born in (clone3 with CLONE_INTO_CGROUP),
         * or -EBADF: a birth there spares it the move that enter() makes,
         * which takes the kernel's cgroup write lock and may wait for an
         * RCU grace period (6–23 ms measured). */
        int (*birth_cgroup)(const PayloadContainment *c);
        /* In the forked child, before it drops its privileges, unless it
         * was born in birth_cgroup(); *ret_step as for setup. */
        int (*enter)(const PayloadContainment *c, const char **ret_step);
        /* SIGKILL everything of the job, now. leader may hold no pidfd. */
        void (*kill)(const PayloadContainment *c, const PidRef *leader);
        /* A graceful stop's signal to every process of the job, each
         * through a pidfd checked to be the job's once pinned. */
        void (*signal)(const PayloadContainment *c, const PidRef *leader, int sig);
        /* Without killing: 1 when nothing of the job is left, 0 when some
         * is, or -errno. */
        int (*is_empty)(const PayloadContainment *c);
        /* A cgroup.events watch (cgroup.h: poll it for
         * CGROUP_EVENTS_WATCH_EVENTS, re-arm it by reading it) that wakes
         * when is_empty() may have changed, or -EOPNOTSUPP where nothing
         * tells (then ask again after a while). */
        int (*watch)(const PayloadContainment *c, int *ret_fd);
        /* Kill what is left and wait until nothing is: 0 once confirmed,
         * -ETIMEDOUT after TEARDOWN_TIMEOUT_USEC, or another -errno. */
        int (*confirm_empty)(const PayloadContainment *c);
        /* What the job used, read after its teardown (before cleanup). */
        void (*usage)(const PayloadContainment *c, JobUsage *ret);
        /* The controllers that enforce the job's limits (the job cgroup's
         * cgroup.controllers); -EOPNOTSUPP where there is no cgroup. */
        int (*controllers)(const PayloadContainment *c, char **ret);
        /* After a confirmed teardown was published. */
        void (*cleanup)(const PayloadContainment *c);
        /* pid, a child of ours that began among the job's processes (a
         * sandboxed job's socket broker), is ours from now on: none of the
         * job's, so not signalled by a stop, nor counted by is_empty(). */
        int (*adopt)(PayloadContainment *c, pid_t pid);
        /* The payload's cgroup for run.json, or NULL when there is none. */
        const char *(*cgroup)(const PayloadContainment *c);
} PayloadContainmentOps;

struct PayloadContainment {
        const PayloadContainmentOps *ops;
        /* The cgroup kind's state; the process tree needs none. */
        char *job_cgroup; /* the cgroup the supervisor was started in, as the grant names it */
        char *payload;    /* <job_cgroup>/payload */
        int payload_fd;
        /* The process tree's: the one adopted, skipped by its walks. */
        pid_t adopted;
};

#define PAYLOAD_CONTAINMENT_NULL ((PayloadContainment) { .payload_fd = -EBADF })

extern const PayloadContainmentOps payload_cgroup_ops;
extern const PayloadContainmentOps payload_process_tree_ops;

/* The operations for a mechanism: the cgroup kind for every one that
 * contains. NULL for an unknown mechanism. */
const PayloadContainmentOps *payload_containment_ops(Mechanism m);

/* Choose the operations; -EINVAL for an unknown mechanism. */
int payload_containment_init(PayloadContainment *c, Mechanism m);
void payload_containment_done(PayloadContainment *c);
