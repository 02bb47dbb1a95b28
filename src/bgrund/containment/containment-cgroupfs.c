/* SPDX-License-Identifier: MIT */
/* The cgroupfs mechanism, for hosts and containers whose service manager is
 * not systemd: bgrund makes each job's cgroup itself, inside the cgroup v2
 * subtree it was started in (a container's own cgroup namespace, say), and
 * never inside a tree systemd manages. It moves itself into a leaf,
 * "bgrund", and puts each job's cgroup beside it, "bgrun-job-<id>"; the
 * supervisor is born in its supervisor/ leaf (clone3 with
 * CLONE_INTO_CGROUP) and its command in payload/, as the supervisor splits
 * a scope, and the teardown is cgroup.kill and "populated 0", as for
 * systemd. Nothing of a job is ever moved between cgroups: a move takes the
 * kernel's cgroup write lock, which waits for an RCU grace period unless
 * another move just did (measured here: 6–23 ms, against 0.1 ms for a birth
 * inside). Jobs outlive bgrund only
 * if bgrund is not the container's PID 1 (run it under an init, as
 * docker run --init gives). */
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "cgroup.h"
#include "containment.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

#define JOB_PREFIX "bgrun-job-"
#define SELF_LEAF "bgrund"

typedef struct CgroupfsState {
        char *base;        /* the subtree bgrund was started in, e.g. "/" in a container */
        int base_fd;
        char *controllers; /* what job cgroups can have enforced ("" on hybrid hosts) */
} CgroupfsState;

static CgroupfsState *state(Containment *c) {
        return c->data;
}

static int job_cgroup(Containment *c, const char *id, char **ret) {
        if (!state(c))
                return -ENXIO; /* not initialized: the base is unknown */
        const char *base = state(c)->base;
        return asprintf(ret, "%s/" JOB_PREFIX "%s", streq(base, "/") ? "" : base, id) < 0 ? -ENOMEM : 0;
}

/* systemd marks a cgroup it hands over with Delegate=yes (v251 and later). */
static bool delegated_by_systemd(const char *path) {
        const char *root;
        char full[4096], v[8];
        if (cgroup2_root(&root) < 0 || (size_t) snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full)
                return false;
        for (const char *name = "trusted.delegate"; name; name = streq(name, "trusted.delegate") ? "user.delegate" : NULL) {
                ssize_t n = getxattr(full, name, v, sizeof v - 1);
                if (n > 0) {
                        v[n] = '\0';
                        if (streq(v, "1"))
                                return true;
                }
        }
        return false;
}

static int cgroupfs_init(Containment *c) {
        const char *root;
        int r = cgroup2_root(&root);
        if (r < 0)
                return log_info_errno(r, "cgroupfs: no cgroup v2 hierarchy; skipped");

        _cleanup_free_ char *own = NULL;
        r = cgroup_path_of_pid(0, &own);
        if (r < 0)
                return log_info_errno(r, "cgroupfs: cannot find bgrund's own cgroup (%m); skipped");
        /* A restarted bgrund may start in its old leaf. */
        char *slash = strrchr(own, '/');
        if (slash && streq(slash + 1, SELF_LEAF))
                *slash = '\0';
        if (!*own)
                strcpy(own, "/");

        /* A tree systemd manages is systemd's to divide: there the systemd
         * mechanism makes the cgroups, unless this one was delegated. */
        if (access("/run/systemd/system", F_OK) >= 0 && !delegated_by_systemd(own))
                return log_info_errno(-EBUSY, "cgroupfs: %s belongs to systemd (no Delegate=yes); skipped", own);

        _cleanup_free_ CgroupfsState *s = calloc(1, sizeof(CgroupfsState));
        if (!s)
                return -ENOMEM;
        s->base_fd = -EBADF;
        s->base = TAKE_PTR(own);
        r = cgroup_open(s->base, &s->base_fd);
        _cleanup_close_ int self_fd = -EBADF;
        if (r >= 0)
                r = cgroup_create_child(s->base_fd, SELF_LEAF, &self_fd);
        if (r >= 0)
                r = cgroup_attach(self_fd, 0);
        if (r < 0) {
                log_info_errno(r, "cgroupfs: cannot make cgroups in %s (%m): no writable cgroup v2 subtree; skipped",
                               s->base);
                safe_close(s->base_fd);
                free(s->base);
                return r;
        }

        /* Controllers only where the subtree has them and its root holds no
         * process of someone else's (cgroup v2's rule for inner nodes). */
        if (cgroup_read_controllers(s->base_fd, &s->controllers) < 0 && !(s->controllers = strdup("")))
                return -ENOMEM;
        static const char *const wanted[] = { "memory", "pids", "cpu" };
        for (size_t i = 0; i < ELEMENTSOF(wanted); i++) {
                char v[16];
                snprintf(v, sizeof v, "+%s", wanted[i]);
                if (cgroup_has_controller(s->controllers, wanted[i]) &&
                    cgroup_write_attribute(s->base_fd, "cgroup.subtree_control", v) < 0)
                        log_info("cgroupfs: the %s controller cannot be enabled in %s; its limits are not enforced",
                                 wanted[i], s->base);
        }
        free(s->controllers);
        s->controllers = NULL;
        if (cgroup_read_attribute(s->base_fd, "cgroup.subtree_control", &s->controllers) < 0 &&
            !(s->controllers = strdup("")))
                return -ENOMEM;
        log_info("cgroupfs: jobs get cgroups in %s (controllers: %s)", s->base,
                 *s->controllers ? s->controllers : "none");
        c->data = TAKE_PTR(s);
        return 0;
}

static void cgroupfs_done(Containment *c) {
        CgroupfsState *s = state(c);
        if (!s)
                return;
        safe_close(s->base_fd);
        free(s->base);
        free(s->controllers);
        free(s);
        c->data = NULL;
}

static bool cgroupfs_available(Containment *c) {
        return state(c);
}

static int cgroupfs_describe(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup) {
        _cleanup_free_ char *unit = strdup(""), *cgroup = NULL;
        if (!unit)
                return -ENOMEM;
        int r = job_cgroup(c, spec->id, &cgroup);
        if (r < 0)
                return r;
        *ret_unit = TAKE_PTR(unit);
        *ret_cgroup = TAKE_PTR(cgroup);
        return 0;
}

/* What the job's cgroup can enforce of its limits. */
static void apply_limits(Containment *c, const ContainmentJob *j, int fd) {
        const JobSpec *l = j->spec;
        const char *have = state(c)->controllers;
        char v[64];
        if (l->memory_max > 0 && cgroup_has_controller(have, "memory")) {
                snprintf(v, sizeof v, "%" PRIu64, l->memory_max);
                (void) cgroup_write_attribute(fd, "memory.max", l->memory_max == UINT64_MAX ? "max" : v);
        }
        if (l->tasks_max > 0 && cgroup_has_controller(have, "pids")) {
                snprintf(v, sizeof v, "%" PRIu64, l->tasks_max);
                (void) cgroup_write_attribute(fd, "pids.max", l->tasks_max == UINT64_MAX ? "max" : v);
        }
        if (l->cpu_quota_per_sec_usec > 0 && cgroup_has_controller(have, "cpu")) {
                snprintf(v, sizeof v, "%" PRIu64 " 1000000", l->cpu_quota_per_sec_usec);
                (void) cgroup_write_attribute(fd, "cpu.max", v);
        }
}

static int cgroupfs_prepare(Containment *c, const ContainmentJob *j, SpawnPlan *ret) {
        char name[sizeof(JOB_PREFIX) + JOB_ID_MAX];
        snprintf(name, sizeof name, JOB_PREFIX "%s", j->id);
        int fd;
        int r = cgroup_create_child(state(c)->base_fd, name, &fd);
        if (r < 0)
                return r;
        _cleanup_close_ int job_fd = fd;
        apply_limits(c, j, job_fd);
        int sup_fd;
        r = cgroup_create_child(job_fd, "supervisor", &sup_fd);
        if (r < 0)
                return r;
        *ret = SPAWN_PLAN_NULL;
        ret->cgroup_fd = sup_fd; /* born inside it */
        return 0;
}

static int cgroupfs_start(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        return 1; /* it was born in its cgroup: nothing left to set up */
}

static int cgroupfs_verify(Containment *c, const ContainmentJob *j, pid_t pid) {
        _cleanup_free_ char *job = NULL, *actual = NULL;
        int r = job_cgroup(c, j->id, &job);
        if (r >= 0)
                r = cgroup_path_of_pid(pid, &actual);
        if (r < 0)
                return r;
        size_t n = strlen(job);
        return strncmp(actual, job, n) == 0 && streq(actual + n, "/supervisor");
}

static int cgroupfs_list(Containment *c, char ***ret_ids, char ***ret_cgroups) {
        _cleanup_strv_free_ char **ids = calloc(1, sizeof(char *)), **cgroups = calloc(1, sizeof(char *));
        if (!ids || !cgroups)
                return -ENOMEM;
        _cleanup_closedir_ DIR *dir = state(c) ? fdopendir(dup(state(c)->base_fd)) : NULL;
        size_t n = 0;
        struct dirent *de;
        while (dir && (de = readdir(dir))) {
                const char *id = startswith_s(de->d_name, JOB_PREFIX) ? de->d_name + strlen(JOB_PREFIX) : NULL;
                if (!id || !job_id_is_valid(id))
                        continue;
                _cleanup_close_ int fd = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || cgroup_is_populated(fd) != 1)
                        continue;
                char *cgroup = NULL;
                size_t n_cgroups = n;
                int r = strv_consume(&ids, &n, strdup(id));
                if (r >= 0)
                        r = strv_consume(&cgroups, &n_cgroups, job_cgroup(c, id, &cgroup) < 0 ? NULL : cgroup);
                if (r < 0)
                        return r;
        }
        *ret_ids = TAKE_PTR(ids);
        *ret_cgroups = TAKE_PTR(cgroups);
        return 0;
}

static int cgroupfs_identify(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]) {
        _cleanup_free_ char *prefix = NULL;
        if (!state(c) || job_cgroup(c, "", &prefix) < 0)
                return 0;
        if (!startswith_s(cgroup, prefix))
                return 0;
        const char *id = cgroup + strlen(prefix);
        if (strlen(id) < JOB_ID_LEN || (id[JOB_ID_LEN] != '\0' && id[JOB_ID_LEN] != '/'))
                return 0;
        memcpy(ret_id, id, JOB_ID_LEN);
        ret_id[JOB_ID_LEN] = '\0';
        return job_id_is_valid(ret_id);
}

static void cgroupfs_cleanup(Containment *c, const char *cgroup, bool released) {
        /* Nobody collects what bgrund made itself: the job's cgroup and the
         * two the supervisor split it into, once they are empty. */
        _cleanup_close_ int fd = -EBADF;
        if (cgroup_open(cgroup, &fd) < 0)
                return;
        (void) unlinkat(fd, "payload", AT_REMOVEDIR);
        (void) unlinkat(fd, "supervisor", AT_REMOVEDIR);
        const char *root;
        char full[4096];
        if (cgroup2_root(&root) >= 0 && (size_t) snprintf(full, sizeof full, "%s%s", root, cgroup) < sizeof full)
                (void) rmdir(full);
}

static int cgroupfs_find_supervisor(Containment *c, const char *cgroup, PidRef *ret) {
        return containment_cgroup_supervisor(cgroup, ret);
}

static int cgroupfs_controllers(Containment *c, const char **ret) {
        if (!state(c))
                return -ENXIO;
        *ret = state(c)->controllers; /* the base's subtree_control, what each job cgroup gets */
        return 0;
}

const ContainmentOps containment_cgroupfs_ops = {
        .mechanism = MECHANISM_CGROUPFS,
        .teardown_method = TEARDOWN_CGROUP_KILL,
        .init = cgroupfs_init,
        .done = cgroupfs_done,
        .available = cgroupfs_available,
        .describe = cgroupfs_describe,
        .prepare = cgroupfs_prepare,
        .start = cgroupfs_start,
        .verify = cgroupfs_verify,
        .kill = containment_cgroup_kill,
        .is_empty = containment_cgroup_is_empty,
        .watch = containment_cgroup_watch,
        .list = cgroupfs_list,
        .kill_orphan = containment_cgroup_kill_orphan,
        .identify = cgroupfs_identify,
        .find_supervisor = cgroupfs_find_supervisor,
        .cleanup = cgroupfs_cleanup,
        .controllers = cgroupfs_controllers,
};
