/* SPDX-License-Identifier: MIT */
/* What the mechanisms that hold a job in a cgroup of its own (systemd,
 * cgroupfs) do alike: kill it whole with cgroup.kill, tell it empty from
 * cgroup.events, watch that file, and find the supervisor in its
 * "supervisor/" leaf. Each mechanism's ops table points here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "containment.h"
#include "log.h"
#include "macro.h"

int containment_cgroup_kill(Containment *c, const char *job_id, const char *cgroup, const JobRun *run,
                            int *ret_handle) {
        _cleanup_close_ int fd = -EBADF;
        int r = cgroup_open(cgroup, &fd);
        if (r < 0)
                return r; /* -ENOENT: removed (by systemd, with its scope), so it was empty */
        /* Confirmation is what counts: a failed kill shows as a cgroup that
         * never empties. */
        r = cgroup_kill(fd);
        if (r < 0)
                log_warning_errno(r, "Job %s: cgroup.kill failed: %m", job_id);
        *ret_handle = TAKE_FD(fd);
        return 0;
}

int containment_cgroup_is_empty(Containment *c, const JobRun *run, int handle) {
        int r = cgroup_is_populated(handle);
        return r < 0 ? r : !r;
}

int containment_cgroup_watch(Containment *c, int handle, int *ret_fd) {
        return cgroup_events_watch(handle, ret_fd);
}

int containment_cgroup_kill_orphan(Containment *c, const char *cgroup) {
        _cleanup_close_ int fd = -EBADF;
        int r = cgroup_open(cgroup, &fd);
        return r < 0 ? r : cgroup_kill(fd);
}

/* Whether pid's cgroup is path and bgrund's uid runs it. */
static bool runs_in(pid_t pid, const char *path) {
        char p[64];
        struct stat st;
        snprintf(p, sizeof p, "/proc/%d", (int) pid);
        if (stat(p, &st) < 0 || st.st_uid != geteuid())
                return false;
        _cleanup_free_ char *actual = NULL;
        return cgroup_path_of_pid(pid, &actual) >= 0 && streq(actual, path);
}

int containment_cgroup_supervisor(const char *cgroup, PidRef *ret) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n;
        _cleanup_close_ int fd = -EBADF;
        if (asprintf(&path, "%s/supervisor", streq(cgroup, "/") ? "" : cgroup) < 0)
                return -ENOMEM;
        int r = cgroup_open(path, &fd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        /* The supervisor alone lives there (its command is in payload/):
         * anything else is not what this is looking for. */
        r = cgroup_read_pids(fd, 1, &pids, &n);
        if (r == -E2BIG || r == -EBADMSG)
                return 0;
        if (r < 0)
                return r;
        if (n != 1)
                return 0;
        pid_t pid = pids[0];
        /* Pinned, then asked again: it is still the process found there. */
        PidRef ref = PIDREF_NULL;
        if (!runs_in(pid, path) || pidref_set_pid(&ref, pid) < 0)
                return 0;
        if (!runs_in(pid, path)) {
                pidref_done(&ref);
                return 0;
        }
        *ret = ref;
        return 1;
}
