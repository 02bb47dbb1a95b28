/* SPDX-License-Identifier: MIT */
/* A pooled supervisor's wait for its job, and its fork into the job's
 * cgroup where the job has one of bgrund's making (cgroupfs): a child born
 * inside it (clone3 with CLONE_INTO_CGROUP) costs a fork, where a supervisor
 * spawned there would cost an exec and its dynamic linking, and moving this
 * one there the kernel's cgroup write lock (an RCU grace period). */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-passing.h"
#include "macro.h"
#include "pooled.h"
#include "supervisor-protocol.h"

/* Born in cgroup_fd as bgrund's child (CLONE_PARENT), so that bgrund reaps
 * it and holds its pidfd as it does every supervisor's. 0 in the child; 1 in
 * the parent once bgrund has the child's pidfd; -errno when there is none
 * (bgrund told so). */
static int fork_into(int go_fd, int cgroup_fd) {
        int pidfd = -EBADF;
        struct clone_args args = {
                .flags = CLONE_INTO_CGROUP | CLONE_PARENT | CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = 0, /* CLONE_PARENT: ours, SIGCHLD, to bgrund */
                .cgroup = (uint64_t) cgroup_fd,
        };
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
        if (pid == 0)
                /* A session of its own, as a supervisor bgrund spawns has. */
                return setsid() < 0 ? negative_errno() : 0;
        if (pid < 0) {
                int r = negative_errno();
                const char answer[2] = { POOL_FORK_FAILED, (char) MIN(-r, 255) };
                (void) !write(go_fd, answer, sizeof answer);
                return r;
        }
        /* Unanswered, bgrund finds the child in the cgroup once we are gone. */
        int r = fd_send(go_fd, POOL_FORKED, pidfd, 0);
        safe_close(pidfd);
        return r < 0 ? r : 1;
}

int pooled_wait_for_job(int go_fd, char ret[static JOB_ID_MAX]) {
        /* Exactly an id: the byte after it says where to run it. */
        char id[JOB_ID_LEN];
        size_t n = 0;
        while (n < sizeof id) {
                ssize_t k = read(go_fd, id + n, sizeof id - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -ECANCELED;
                n += (size_t) k;
        }
        memcpy(ret, id, JOB_ID_LEN);
        ret[JOB_ID_LEN] = '\0';
        if (!job_id_is_valid(ret))
                return -EINVAL;

        char how;
        int fd, r;
        do
                r = fd_receive(go_fd, 0, &how, &fd);
        while (r == -EINTR);
        if (r == 0)
                return -ECANCELED;
        if (r < 0)
                return r;
        _cleanup_close_ int cgroup_fd = fd;
        if (how == POOL_RUN_HERE && cgroup_fd < 0)
                return 0;
        if (how == POOL_FORK_INTO_CGROUP && cgroup_fd >= 0)
                return fork_into(go_fd, cgroup_fd);
        return -EBADMSG;
}
