/* SPDX-License-Identifier: MIT */
/* The process-group mechanism, for when no cgroup can be had: the supervisor
 * runs in its own session (supervisor-process.c) and makes the command lead
 * its own session and process group. It is never "contained": a process
 * that calls setsid() leaves the group and cannot be found again, and the
 * record says so. */
#include <signal.h>

#include "containment.h"
#include "macro.h"
#include "pidref.h"
#include "process-tree.h"
#include "strv.h"

static bool process_group_available(Containment *c) {
        return true;
}

static int process_group_describe(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup) {
        _cleanup_free_ char *unit = strdup(""), *cgroup = strdup("");
        if (!unit || !cgroup)
                return -ENOMEM;
        *ret_unit = TAKE_PTR(unit);
        *ret_cgroup = TAKE_PTR(cgroup);
        return 0;
}

static int process_group_prepare(Containment *c, const ContainmentJob *j, SpawnPlan *ret) {
        *ret = SPAWN_PLAN_NULL;
        return 0;
}

static int process_group_start(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        return 1; /* nothing to set up around it: ready at once */
}

static int process_group_verify(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        return 1;
}

static int process_group_kill(Containment *c, const char *job_id, const char *cgroup, const JobRun *run,
                              int *ret_handle) {
        *ret_handle = -EBADF;
        if (!run)
                return 0; /* the command never ran: nothing to find */
        /* Signal only a verified leader; a group whose leader is gone cannot
         * be told apart from a stranger's, so it is left alone. */
        PidRef leader = PIDREF_NULL;
        if (pidref_verify(run->pid, run->start_token, &leader) == PIDREF_OWNED) {
                /* The group first, while its verified leader still holds
                 * the group's id. */
                (void) process_group_kill_by_leader(leader.fd, leader.pid, SIGKILL);
                (void) pidref_kill(&leader, SIGKILL);
                pidref_done(&leader);
        }
        return 0;
}

static int process_group_is_empty(Containment *c, const JobRun *run, int handle) {
        if (!run)
                return -ENODATA; /* nothing to look at: only the lifecycle knows whether anything ran */
        return !process_group_has_members(run->pid);
}

static int process_group_watch(Containment *c, int handle, int *ret_fd) {
        return -EOPNOTSUPP; /* no event tells when a process group empties */
}

static int process_group_list(Containment *c, char ***ret_ids, char ***ret_cgroups) {
        /* A group outlives no record that could name it: nothing to find. */
        _cleanup_strv_free_ char **ids = calloc(1, sizeof(char *)), **cgroups = calloc(1, sizeof(char *));
        if (!ids || !cgroups)
                return -ENOMEM;
        *ret_ids = TAKE_PTR(ids);
        *ret_cgroups = TAKE_PTR(cgroups);
        return 0;
}

static int process_group_kill_orphan(Containment *c, const char *cgroup) {
        return -EOPNOTSUPP;
}

static int process_group_identify(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]) {
        return 0; /* no cgroup tells a process group's job */
}

const ContainmentOps containment_process_group_ops = {
        .mechanism = MECHANISM_PROCESS_GROUP,
        .teardown_method = TEARDOWN_PROCESS_GROUP,
        .available = process_group_available,
        .describe = process_group_describe,
        .prepare = process_group_prepare,
        .start = process_group_start,
        .verify = process_group_verify,
        .kill = process_group_kill,
        .is_empty = process_group_is_empty,
        .watch = process_group_watch,
        .list = process_group_list,
        .kill_orphan = process_group_kill_orphan,
        .identify = process_group_identify,
};
