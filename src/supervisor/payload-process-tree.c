/* SPDX-License-Identifier: MIT */
/*
 * The process-tree kind, for process_group. The command leads its own
 * session and process group; as their child subreaper the supervisor kills
 * its whole process tree through pidfds, setsid()'d children included. This
 * is not containment: a process handed to another service escapes, and
 * nothing limits resources. There is nothing to set up or enter.
 */
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "payload-containment.h"
#include "process-tree.h"
#include "subreaper.h"
#include "time-util.h"

static int payload_tree_setup(PayloadContainment *c, int dir_fd, const char **ret_step) {
        return 0;
}

static int payload_tree_birth_cgroup(const PayloadContainment *c) {
        return -EBADF; /* no cgroup: the child of a plain fork */
}

static int payload_tree_enter(const PayloadContainment *c, const char **ret_step) {
        return 0;
}

static void payload_tree_kill(const PayloadContainment *c, const PidRef *leader) {
        if (leader->fd >= 0)
                (void) pidref_kill(leader, SIGKILL);
        /* As a subreaper every process the job forked, even one that left
         * the process group with setsid(), is still below us. A process
         * whose parent is dying is in no children list until it has been
         * handed to us, so one pass can miss it: pass again while a pass
         * still finds a process not yet dead (a zombie has handed its
         * children over). confirm_empty() still makes sure afterwards. */
        for (unsigned i = 0; i < 20 && process_tree_kill_descendants() > 0; i++)
                usleep(1000);
}

static void payload_tree_signal(const PayloadContainment *c, const PidRef *leader, int sig) {
        /* The leader is our child: the walk signals it too, once. */
        (void) process_tree_signal_descendants(sig, c->adopted);
}

static int payload_tree_is_empty(const PayloadContainment *c) {
        /* Zombies are not counted: they run nothing. */
        int alive = process_tree_signal_descendants(0, c->adopted);
        return alive < 0 ? alive : alive == 0;
}

static int payload_tree_watch(const PayloadContainment *c, int *ret_fd) {
        return -EOPNOTSUPP;
}

/* No cgroup: what the supervisor reaped, the job's whole tree as its
 * subreaper (each process counted once its parent, or we, waited for it).
 * No memory figure: ru_maxrss is one process's, not the job's. */
static void payload_tree_usage(const PayloadContainment *c, JobUsage *ret) {
        struct rusage ru;
        *ret = (JobUsage) {};
        if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
                return;
        ret->cpu_known = true;
        ret->cpu_usage_usec = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * USEC_PER_SEC +
                              (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int payload_tree_controllers(const PayloadContainment *c, char **ret) {
        return -EOPNOTSUPP;
}

static int payload_tree_confirm_empty(const PayloadContainment *c) {
        uint64_t deadline = now_monotonic_usec() + TEARDOWN_TIMEOUT_USEC;
        for (unsigned i = 0;; i++) {
                int alive = process_tree_kill_descendants();
                subreaper_reap_orphans(0);
                if (alive == 0)
                        return 0;
                if (now_monotonic_usec() > deadline)
                        return -ETIMEDOUT;
                /* No event tells when a process tree empties; back off gently. */
                usleep(i < 10 ? 1000 : 20000);
        }
}

static void payload_tree_cleanup(const PayloadContainment *c) {
}

static int payload_tree_adopt(PayloadContainment *c, pid_t pid) {
        c->adopted = pid;
        return 0;
}

static const char *payload_tree_cgroup(const PayloadContainment *c) {
        return NULL;
}

const PayloadContainmentOps payload_process_tree_ops = {
        .name = "process-tree",
        .teardown_method = TEARDOWN_PROCESS_TREE,
        .setup = payload_tree_setup,
        .birth_cgroup = payload_tree_birth_cgroup,
        .enter = payload_tree_enter,
        .kill = payload_tree_kill,
        .signal = payload_tree_signal,
        .is_empty = payload_tree_is_empty,
        .watch = payload_tree_watch,
        .usage = payload_tree_usage,
        .controllers = payload_tree_controllers,
        .confirm_empty = payload_tree_confirm_empty,
        .cleanup = payload_tree_cleanup,
        .adopt = payload_tree_adopt,
        .cgroup = payload_tree_cgroup,
};
