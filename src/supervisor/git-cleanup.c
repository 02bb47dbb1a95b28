/* SPDX-License-Identifier: MIT */
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git-cleanup.h"
#include "git-placeholders.h"
#include "log.h"
#include "macro.h"
#include "privilege.h"

#define CLEANUP_TIMEOUT_MSEC 5000

int git_cleanup(int dir_fd, const JobSpec *spec) {
        if (!git_placeholders_pending(dir_fd))
                return 0;
        GitPlaceholder *p = NULL;
        size_t n = 0;
        int r = git_placeholders_read(dir_fd, &p, &n);
        if (r < 0)
                return log_warning_errno(r, "Job %s: cannot read its placeholders: %m", spec->id);
        if (n > 0) {
                pid_t pid = fork();
                if (pid < 0) {
                        r = negative_errno();
                        git_placeholders_free(p, n);
                        return r;
                }
                if (pid == 0) {
                        /* The job's user's: never a root unlink of a path. */
                        int k = drop_privileges(spec->uid, spec->gid, spec->groups, (int) spec->n_groups);
                        _exit(k < 0 || git_placeholders_remove(p, n) < 0 ? 1 : 0);
                }
                git_placeholders_free(p, n);
                int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
                struct pollfd q = { .fd = pidfd, .events = POLLIN };
                if (pidfd < 0 || poll(&q, 1, CLEANUP_TIMEOUT_MSEC) <= 0) {
                        (void) kill(pid, SIGKILL);
                        r = -ETIMEDOUT;
                }
                int status = 0;
                (void) waitpid(pid, &status, 0);
                safe_close(pidfd);
                if (r < 0)
                        return log_warning_errno(r, "Job %s: its placeholders were not removed in time: %m", spec->id);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        return log_warning_errno(-EIO, "Job %s: not all its placeholders could be removed", spec->id);
        } else
                git_placeholders_free(p, n);
        return git_placeholders_forget(dir_fd);
}
