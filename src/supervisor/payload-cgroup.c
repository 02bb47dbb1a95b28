/* SPDX-License-Identifier: MIT */
/*
 * The cgroup kind, for every mechanism that contains. The supervisor starts
 * inside the job's own cgroup (the systemd mechanism: its transient scope,
 * Delegate=yes), which the grant names. It moves itself into
 * <cgroup>/supervisor and the command into <cgroup>/payload, so that
 * cgroup.kill of payload ends everything the job made and never the
 * supervisor, and "populated 0" confirms it.
 */
#include <fcntl.h>
#include <stdio.h>

#include "cgroup.h"
#include "grant.h"
#include "log.h"
#include "payload-containment.h"

static int payload_cgroup_setup(PayloadContainment *c, int dir_fd, const char **ret_step) {
        *ret_step = "set up the job's cgroup";

        int r = cgroup_path_of_pid(0, &c->job_cgroup);
        if (r < 0)
                return r;
        /* Never split a cgroup that is not the job's own, the one its grant
         * names (bgrund's, say, had the move into the scope not happened). */
        _cleanup_(grant_done) Grant g = {};
        r = grant_read(dir_fd, &g);
        if (r < 0)
                return r;
        if (!g.cgroup || !streq(g.cgroup, c->job_cgroup)) {
                *ret_step = "set up the job's cgroup: the supervisor is not in the job's scope";
                return -EPERM;
        }

        _cleanup_close_ int job_fd = -EBADF, sup_fd = -EBADF;
        r = cgroup_open(c->job_cgroup, &job_fd);
        if (r < 0)
                return r;
        /* Leave the job cgroup's root so it holds no process itself (cgroup
         * v2 enables controllers for children only of cgroups without
         * processes), then make the payload's cgroup beside ours. */
        r = cgroup_create_child(job_fd, "supervisor", &sup_fd);
        if (r < 0)
                return r;
        r = cgroup_attach(sup_fd, 0);
        if (r < 0)
                return r;
        r = cgroup_create_child(job_fd, "payload", &c->payload_fd);
        if (r < 0)
                return r;
        if (asprintf(&c->payload, "%s/payload", streq(c->job_cgroup, "/") ? "" : c->job_cgroup) < 0) {
                c->payload = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int payload_cgroup_enter(const PayloadContainment *c, const char **ret_step) {
        *ret_step = "enter the job's cgroup";
        return cgroup_attach(c->payload_fd, 0);
}

static void payload_cgroup_kill(const PayloadContainment *c, const PidRef *leader) {
        /* The leader is in the payload like everything else of the job. */
        int r = cgroup_kill(c->payload_fd);
        if (r < 0)
                log_warning_errno(r, "cgroup.kill failed for %s: %m", c->payload);
}

static int payload_cgroup_confirm_empty(const PayloadContainment *c) {
        (void) cgroup_kill(c->payload_fd);
        int r = cgroup_wait_empty(c->payload_fd, TEARDOWN_TIMEOUT_USEC);
        if (r < 0)
                log_warning_errno(r, "Cgroup %s not confirmed empty: %m", c->payload);
        return r;
}

/* An empty payload cgroup is no use to anyone; the supervisor's own goes
 * with the job's cgroup when it exits. */
static void payload_cgroup_cleanup(const PayloadContainment *c) {
        _cleanup_close_ int job_fd = -EBADF;
        if (cgroup_open(c->job_cgroup, &job_fd) >= 0)
                (void) unlinkat(job_fd, "payload", AT_REMOVEDIR);
}

static const char *payload_cgroup_path(const PayloadContainment *c) {
        return c->payload;
}

const PayloadContainmentOps payload_cgroup_ops = {
        .name = "cgroup",
        .teardown_method = TEARDOWN_CGROUP_KILL,
        .setup = payload_cgroup_setup,
        .enter = payload_cgroup_enter,
        .kill = payload_cgroup_kill,
        .confirm_empty = payload_cgroup_confirm_empty,
        .cleanup = payload_cgroup_cleanup,
        .cgroup = payload_cgroup_path,
};
