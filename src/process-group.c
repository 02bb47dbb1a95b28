/* SPDX-License-Identifier: MIT */
/* The process-group backend, for when no cgroup can be had: bgrund starts the
 * supervisor detached (double fork, own session), and the supervisor makes
 * the command lead its own session and process group. It is never
 * "contained": a process that calls setsid() leaves the group and cannot be
 * found again, and the record says so. Readiness comes over a pipe: one byte
 * once run.json is written, EOF without it when setup failed. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "build-config.h"
#include "containment.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"

static bool process_group_available(Daemon *d) {
        return true;
}

static int on_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;

        j->live->ready_source = sd_event_source_disable_unref(j->live->ready_source);
        if (n == 1)
                job_started(j);
        else
                job_start_failed(j, "the supervisor exited before the command ran");
        return 0;
}

static int process_group_start(Job *j) {
        int ready[2];
        if (pipe2(ready, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        _cleanup_close_ int ready_read = ready[0];
        _cleanup_close_ int ready_write = ready[1];

        char fd_arg[16];
        snprintf(fd_arg, sizeof fd_arg, "%d", 3);

        pid_t pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                /* Intermediate child: leave bgrund's session, fork the
                 * supervisor and exit, so the supervisor is not our child
                 * and survives bgrund. */
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                if (setsid() < 0)
                        _exit(1);
                pid_t sup = fork();
                if (sup < 0)
                        _exit(1);
                if (sup > 0)
                        _exit(0);
                if (dup2(ready_write, 3) < 0)
                        _exit(1);
                int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null_fd >= 0) {
                        dup2(null_fd, STDIN_FILENO);
                        dup2(null_fd, STDOUT_FILENO);
                }
                char *argv[] = { (char *) BGRUN_SUPERVISOR_PATH, (char *) "--job", j->id,
                                 (char *) "--state-dir", (char *) j->daemon->state_dir,
                                 (char *) "--ready-fd", fd_arg, NULL };
                execv(BGRUN_SUPERVISOR_PATH, argv);
                _exit(127);
        }

        ready_write = safe_close(ready_write);
        /* The intermediate child exits at once; reap it so no zombie stays. */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;

        int r = sd_event_add_io(j->daemon->event, &j->live->ready_source, ready_read, EPOLLIN, on_ready, j);
        if (r < 0)
                return r;
        r = sd_event_source_set_io_fd_own(j->live->ready_source, true);
        if (r < 0)
                return r;
        TAKE_FD(ready_read);
        return 0;
}

const ContainmentBackend process_group_backend = {
        .mechanism = MECHANISM_PROCESS_GROUP,
        .contains = false,
        .available = process_group_available,
        .start = process_group_start,
};

const ContainmentBackend *containment_backend(Mechanism m) {
        switch (m) {
        case MECHANISM_SYSTEMD: return &systemd_backend;
        case MECHANISM_PROCESS_GROUP: return &process_group_backend;
        default: return NULL;
        }
}
