/* SPDX-License-Identifier: MIT */
/*
 * The cgroup kind, for every mechanism that contains. The supervisor starts
 * inside the job's own cgroup (the systemd mechanism: its transient scope,
 * Delegate=yes), which the grant names, and moves itself into
 * <cgroup>/supervisor, or is born there (cgroupfs: bgrund makes the leaf).
 * Its command is born in <cgroup>/payload, so that cgroup.kill of payload
 * ends everything the job made and never the supervisor, and "populated 0"
 * confirms it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>

#include "cgroup.h"
#include "grant.h"
#include "log.h"
#include "payload-containment.h"

static int payload_cgroup_setup(PayloadContainment *c, int dir_fd, const char **ret_step) {
        *ret_step = "set up the job's cgroup";

        int r = cgroup_path_of_pid(0, &c->job_cgroup);
        if (r < 0)
                return r;
        /* Born in the job cgroup's supervisor/ leaf already: the job's
         * cgroup is its parent. */
        char *leaf = strrchr(c->job_cgroup, '/');
        bool born_in_leaf = leaf && leaf != c->job_cgroup && streq(leaf, "/supervisor");
        if (born_in_leaf)
                *leaf = '\0';
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
        /* Not even the root when a grant names it: a job's cgroup never is
         * one (cgroupfs jobs stand beside bgrund's leaf), and splitting the
         * root would move whatever else lives there. */
        if (streq(c->job_cgroup, "/")) {
                *ret_step = "set up the job's cgroup: the supervisor is in the root cgroup";
                return -EPERM;
        }

        _cleanup_close_ int job_fd = -EBADF, sup_fd = -EBADF;
        r = cgroup_open(c->job_cgroup, &job_fd);
        if (r < 0)
                return r;
        /* Leave the job cgroup's root so it holds no process itself (cgroup
         * v2 enables controllers for children only of cgroups without
         * processes), then make the payload's cgroup beside ours. */
        if (!born_in_leaf) {
                r = cgroup_create_child(job_fd, "supervisor", &sup_fd);
                if (r < 0)
                        return r;
                r = cgroup_attach(sup_fd, 0);
                if (r < 0)
                        return r;
        }
        /* Account the payload's memory where the job cgroup has the
         * controller (memory.peak); its limits stay the job cgroup's. */
        _cleanup_free_ char *controllers = NULL;
        if (cgroup_read_controllers(job_fd, &controllers) >= 0 && cgroup_has_controller(controllers, "memory"))
                (void) cgroup_write_attribute(job_fd, "cgroup.subtree_control", "+memory");
        r = cgroup_create_child(job_fd, "payload", &c->payload_fd);
        if (r < 0)
                return r;
        if (asprintf(&c->payload, "%s/payload", c->job_cgroup) < 0) {
                c->payload = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int payload_cgroup_birth_cgroup(const PayloadContainment *c) {
        return c->payload_fd;
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

/* Whether pid, pinned by a pidfd, is in the payload cgroup or below it. */
static bool pid_in_payload(const PayloadContainment *c, pid_t pid) {
        _cleanup_free_ char *path = NULL;
        if (cgroup_path_of_pid(pid, &path) < 0)
                return false;
        size_t n = strlen(c->payload);
        return strncmp(path, c->payload, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* How many cgroups below the payload are walked; the job's owner cannot
 * make any (the payload is root's), so this bounds a surprise only. */
#define SIGNAL_DEPTH_MAX 16
/* How many processes of one cgroup are signalled in one pass. */
#define SIGNAL_PIDS_MAX (512U * 1024U)

/* Passes over cgroup.procs, for processes forked while we signalled. */
#define SIGNAL_PASSES 3

/* The pids signalled so far: each process gets a stop's signal once (a
 * second SIGINT means "now" to many programs). */
typedef struct PidSet {
        pid_t *pids;
        size_t n, allocated;
} PidSet;

static bool pid_set_contains(const PidSet *s, pid_t pid) {
        for (size_t i = 0; i < s->n; i++)
                if (s->pids[i] == pid)
                        return true;
        return false;
}

static void pid_set_add(PidSet *s, pid_t pid) {
        if (s->n == s->allocated) {
                size_t a = s->allocated ? s->allocated * 2 : 64;
                pid_t *p = realloc(s->pids, a * sizeof(pid_t));
                if (!p)
                        return; /* then it may get a second signal: no worse */
                s->pids = p;
                s->allocated = a;
        }
        s->pids[s->n++] = pid;
}

/* sig to every process listed in cg_fd's cgroup.procs and below that is
 * not in done; each pid is pinned with pidfd_open and checked to be in the
 * payload before the signal, which succeeds only if the pinned process
 * still lives, so the check was about the process signalled. Returns how
 * many were signalled. */
static int signal_cgroup_tree(const PayloadContainment *c, int cg_fd, int sig, PidSet *done, unsigned depth) {
        int n = 0;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n_pids = 0;
        if (cgroup_read_pids(cg_fd, SIGNAL_PIDS_MAX, &pids, &n_pids) >= 0)
                for (size_t i = 0; i < n_pids; i++) {
                        pid_t pid = pids[i];
                        if (pid_set_contains(done, pid))
                                continue;
                        _cleanup_close_ int pidfd = pidfd_open(pid, 0);
                        if (pidfd < 0 || !pid_in_payload(c, pid))
                                continue;
                        if (pidfd_send_signal(pidfd, sig, NULL, 0) >= 0) {
                                pid_set_add(done, pid);
                                n++;
                        }
                }
        if (depth >= SIGNAL_DEPTH_MAX)
                return n;
        _cleanup_close_ int dup_fd = openat(cg_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
        if (!d)
                return n;
        TAKE_FD(dup_fd);
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                        _cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (sub >= 0)
                                n += signal_cgroup_tree(c, sub, sig, done, depth + 1);
                }
        closedir(d);
        return n;
}

static void payload_cgroup_signal(const PayloadContainment *c, const PidRef *leader, int sig) {
        /* The job's shell first, through its verified pidfd: it must have
         * its trap's signal before the command it waits for dies of it. A
         * process forked while the list was read is missed by that pass;
         * the next one finds it. */
        PidSet done = {};
        if (leader->fd >= 0 && pidref_kill(leader, sig) >= 0)
                pid_set_add(&done, leader->pid);
        for (unsigned i = 0; i < SIGNAL_PASSES; i++)
                if (signal_cgroup_tree(c, c->payload_fd, sig, &done, 0) == 0)
                        break;
        free(done.pids);
}

static int payload_cgroup_is_empty(const PayloadContainment *c) {
        int r = cgroup_is_populated(c->payload_fd);
        return r < 0 ? r : !r;
}

static int payload_cgroup_watch(const PayloadContainment *c, int *ret_fd) {
        return cgroup_events_watch(c->payload_fd, ret_fd);
}

static void payload_cgroup_usage(const PayloadContainment *c, JobUsage *ret) {
        job_usage_read_cgroup(c->payload_fd, ret);
}

static int payload_cgroup_controllers(const PayloadContainment *c, char **ret) {
        _cleanup_close_ int job_fd = -EBADF;
        int r = cgroup_open(c->job_cgroup, &job_fd);
        return r < 0 ? r : cgroup_read_controllers(job_fd, ret);
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

/* Into the supervisor's own leaf, beside the payload: out of the job's. */
static int payload_cgroup_adopt(PayloadContainment *c, pid_t pid) {
        _cleanup_free_ char *leaf = NULL;
        if (asprintf(&leaf, "%s/supervisor", c->job_cgroup) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd = -EBADF;
        int r = cgroup_open(leaf, &fd);
        return r < 0 ? r : cgroup_attach(fd, pid);
}

const PayloadContainmentOps payload_cgroup_ops = {
        .name = "cgroup",
        .teardown_method = TEARDOWN_CGROUP_KILL,
        .answers_at_confirmation = true,
        .setup = payload_cgroup_setup,
        .birth_cgroup = payload_cgroup_birth_cgroup,
        .enter = payload_cgroup_enter,
        .kill = payload_cgroup_kill,
        .signal = payload_cgroup_signal,
        .is_empty = payload_cgroup_is_empty,
        .watch = payload_cgroup_watch,
        .usage = payload_cgroup_usage,
        .controllers = payload_cgroup_controllers,
        .confirm_empty = payload_cgroup_confirm_empty,
        .cleanup = payload_cgroup_cleanup,
        .adopt = payload_cgroup_adopt,
        .cgroup = payload_cgroup_path,
};
