/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "containment.h"
#include "fileio.h"
#include "grant.h"
#include "log.h"

/* The registry: adding a mechanism is its file and a line here. */
static const ContainmentOps *const registry[_MECHANISM_MAX] = {
        [MECHANISM_SYSTEMD] = &containment_systemd_ops,
        [MECHANISM_CGROUPFS] = &containment_cgroupfs_ops,
        [MECHANISM_PROCESS_GROUP] = &containment_process_group_ops,
};

const ContainmentOps *containment_ops(Mechanism m) {
        return (unsigned) m < _MECHANISM_MAX ? registry[m] : NULL;
}

int containments_init(Containment cs[static _MECHANISM_MAX], const ContainmentHost *host) {
        /* Every registered mechanism can release what an earlier
         * configuration started; only the configured ones start jobs. */
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++)
                cs[m] = (Containment) { .ops = containment_ops(m), .host = host };

        /* In order of preference: one that is off behind one that contains
         * changes nothing for the jobs (cgroupfs under systemd, on every
         * start), and is said as news, not as a warning. */
        bool contained = false;
        for (unsigned i = 0; i < host->config->n_mechanisms; i++) {
                Containment *c = &cs[host->config->mechanisms[i]];
                if (!c->ops)
                        continue;
                int r = c->ops->init ? c->ops->init(c) : 0;
                if (r < 0) {
                        if (contained)
                                log_info_errno(r, "The %s mechanism is off: %m", mechanism_to_string(c->ops->mechanism));
                        else
                                log_warning_errno(r, "The %s mechanism is off: %m",
                                                  mechanism_to_string(c->ops->mechanism));
                        continue;
                }
                c->initialized = true;
                contained = contained || mechanism_contains(c->ops->mechanism);
        }
        return 0;
}

void containments_done(Containment cs[static _MECHANISM_MAX]) {
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++) {
                Containment *c = &cs[m];
                if (c->initialized && c->ops->done)
                        c->ops->done(c);
                c->initialized = false;
        }
}

bool containment_usable(Containment *c) {
        if (!c || !c->initialized || !c->ops->available(c))
                return false;
        return mechanism_contains(c->ops->mechanism) || c->host->config->mode == CONTAINMENT_REPORT_ONLY;
}

/* The one place that decides whether an op may run (containment.h says of
 * each whether it needs init): a mechanism only registered has no state
 * for the others to read. */
static bool may_run(const Containment *c, bool needs_init) {
        return c && c->ops && (c->initialized || !needs_init);
}

int containment_describe(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup) {
        return may_run(c, true) ? c->ops->describe(c, spec, ret_unit, ret_cgroup) : -ENXIO;
}

int containment_prepare(Containment *c, const ContainmentJob *j, SpawnPlan *ret) {
        return may_run(c, true) ? c->ops->prepare(c, j, ret) : -ENXIO;
}

int containment_start(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        return may_run(c, true) ? c->ops->start(c, j, supervisor) : -ENXIO;
}

int containment_verify(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        return may_run(c, true) ? c->ops->verify(c, j, supervisor) : -ENXIO;
}

int containment_kill(Containment *c, const char *job_id, const char *cgroup, const JobRun *run, int *ret_handle) {
        return may_run(c, false) ? c->ops->kill(c, job_id, cgroup, run, ret_handle) : -ENXIO;
}

int containment_is_empty(Containment *c, const JobRun *run, int handle) {
        return may_run(c, false) ? c->ops->is_empty(c, run, handle) : -ENXIO;
}

int containment_watch(Containment *c, int handle, int *ret_fd) {
        return may_run(c, false) ? c->ops->watch(c, handle, ret_fd) : -ENXIO;
}

int containment_list(Containment *c, char ***ret_ids, char ***ret_cgroups) {
        return may_run(c, false) ? c->ops->list(c, ret_ids, ret_cgroups) : -ENXIO;
}

int containment_kill_orphan(Containment *c, const char *cgroup) {
        return may_run(c, false) ? c->ops->kill_orphan(c, cgroup) : -ENXIO;
}

int containment_identify(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]) {
        return may_run(c, false) ? c->ops->identify(c, cgroup, ret_id) : -ENXIO;
}

int containment_find_supervisor(Containment *c, const char *cgroup, PidRef *ret) {
        if (!may_run(c, false))
                return -ENXIO;
        return c->ops->find_supervisor && cgroup && *cgroup ? c->ops->find_supervisor(c, cgroup, ret) : 0;
}

void containment_cleanup(Containment *c, int dir_fd, const JobSpec *spec, bool released) {
        _cleanup_free_ char *cgroup = NULL;
        if (may_run(c, false) && c->ops->cleanup && containment_job_cgroup(c, dir_fd, spec, &cgroup) >= 0)
                c->ops->cleanup(c, cgroup, released);
}

int containment_job_cgroup(Containment *c, int dir_fd, const JobSpec *spec, char **ret) {
        /* What this bgrund would name now may differ from what the job got
         * (a changed configuration, slice or subtree). */
        _cleanup_(grant_done) Grant g = {};
        if (grant_read(dir_fd, &g) >= 0 && c && c->ops && g.mechanism == c->ops->mechanism && g.cgroup) {
                *ret = TAKE_PTR(g.cgroup);
                return 0;
        }
        _cleanup_free_ char *unit = NULL;
        return containment_describe(c, spec, &unit, ret);
}
