/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "privilege.h"
#include "proxy-process.h"
#include "time-util.h"

/* bgrun-proxy beside this program (both in libexecdir). */
static int proxy_path(char *buf, size_t size) {
        ssize_t n = readlink("/proc/self/exe", buf, size - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        char *slash = strrchr(buf, '/');
        if (!slash || (size_t) (slash - buf) + sizeof "/bgrun-proxy" > size)
                return -ENAMETOOLONG;
        strcpy(slash, "/bgrun-proxy");
        return 0;
}

/* In the forked child: the job's user, no capability, fds 3 and 4, exec. */
static _Noreturn void exec_proxy(const JobSpec *spec, const char *path, int listen_fd, int report_fd) {
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) setsid(); /* no job-control signal of a terminal reaches it */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
                _exit(127);
        /* Above 4 first, so that neither is overwritten by the other's dup2. */
        int l = fcntl(listen_fd, F_DUPFD_CLOEXEC, 5), w = fcntl(report_fd, F_DUPFD_CLOEXEC, 5);
        if (l < 0 || w < 0 || dup2(l, 3) < 0 || dup2(w, 4) < 0)
                _exit(127);
        (void) syscall(SYS_close_range, 5U, ~0U, 0U);
        if (drop_privileges(spec->uid, spec->gid, spec->groups, (int) spec->n_groups) < 0)
                _exit(126);
        size_t n = 0;
        while (spec->allowed_domains[n])
                n++;
        char **argv = calloc(n + 2, sizeof(char *));
        if (!argv)
                _exit(127);
        argv[0] = (char *) "bgrun-proxy";
        memcpy(argv + 1, spec->allowed_domains, n * sizeof(char *));
        char *envp[] = { NULL };
        execve(path, argv, envp);
        _exit(127);
}

int proxy_process_start(ProxyProcess *p, const JobSpec *spec, int listen_fd, const char **ret_step) {
        _cleanup_close_ int listen = listen_fd;
        char path[PATH_MAX];
        int r = proxy_path(path, sizeof path);
        if (r < 0)
                return *ret_step = "find bgrun-proxy", r;
        int pipe_fds[2];
        if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
                return *ret_step = "make the proxy's report pipe", negative_errno();
        _cleanup_close_ int write_end = pipe_fds[1];
        p->report_fd = pipe_fds[0];
        pid_t pid = fork();
        if (pid < 0)
                return *ret_step = "fork the job's proxy", negative_errno();
        if (pid == 0)
                exec_proxy(spec, path, listen, write_end);
        r = pidref_set_pid(&p->pid, pid);
        if (r < 0) {
                /* Our own unreaped child: its pid is not reused meanwhile. */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return *ret_step = "open a pidfd for the job's proxy", r;
        }
        write_end = safe_close(write_end);

        /* "R\n", once confined; EOF or nothing in time: it failed. */
        char ready[2];
        struct pollfd q = { .fd = p->report_fd, .events = POLLIN };
        r = poll(&q, 1, PROXY_READY_TIMEOUT_MSEC);
        if (r <= 0 || read(p->report_fd, ready, sizeof ready) != (ssize_t) sizeof ready || memcmp(ready, "R\n", 2) != 0) {
                proxy_process_stop(p, -EBADF);
                return *ret_step = "start the job's proxy", r < 0 ? negative_errno() : -EPROTO;
        }
        return 0;
}

void proxy_process_poll(const ProxyProcess *p, struct pollfd *pfd) {
        *pfd = (struct pollfd) { .fd = p->report_fd, .events = POLLIN };
}

/* One line of the proxy's: "D HOST" (HOST "(invalid)" for none). */
static void take_line(ProxyProcess *p) {
        if (!p->denied) {
                p->denied = calloc(1, sizeof(NetworkDenied));
                if (!p->denied)
                        return;
        }
        const char *host = p->line_len > 2 && strncmp(p->line, "D ", 2) == 0 ? p->line + 2 : NULL;
        network_denied_add(p->denied, host && !p->line_too_long ? host : NULL); /* NULL: "(invalid)" */
        p->changed = true;
}

/* What the pipe holds now: at most a pipe's worth a turn, so a proxy that
 * floods it never holds the supervisor up. */
static void read_reports(ProxyProcess *p) {
        char buf[4096];
        for (int turn = 0; turn < 16 && p->report_fd >= 0; turn++) {
                ssize_t n = read(p->report_fd, buf, sizeof buf);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (n <= 0) {
                        p->report_fd = safe_close(p->report_fd);
                        return;
                }
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] != '\n') {
                                if (p->line_len < sizeof p->line - 1)
                                        p->line[p->line_len++] = buf[i];
                                else
                                        p->line_too_long = true;
                                continue;
                        }
                        p->line[p->line_len] = '\0';
                        take_line(p);
                        p->line_len = 0;
                        p->line_too_long = false;
                }
        }
}

void proxy_process_dispatch(ProxyProcess *p, const struct pollfd *pfd, int dir_fd) {
        if (pfd->fd >= 0 && pfd->revents)
                read_reports(p);
        proxy_process_flush(p, dir_fd);
}

uint64_t proxy_process_hold_usec(const ProxyProcess *p) {
        if (!p->changed)
                return 0;
        uint64_t now = now_monotonic_usec(), due = p->written_at + PROXY_DENIED_WRITE_USEC;
        return due > now ? due - now : 1;
}

static void write_denied(ProxyProcess *p, int dir_fd) {
        p->changed = false;
        p->written_at = now_monotonic_usec();
        int r = network_denied_write(dir_fd, p->denied);
        if (r < 0)
                log_warning_errno(r, "Cannot keep the hosts the job's proxy refused: %m");
}

void proxy_process_flush(ProxyProcess *p, int dir_fd) {
        if (p->changed && dir_fd >= 0 && now_monotonic_usec() >= p->written_at + PROXY_DENIED_WRITE_USEC)
                write_denied(p, dir_fd);
}

void proxy_process_stop(ProxyProcess *p, int dir_fd) {
        if (p->pid.fd >= 0) {
                (void) pidref_kill(&p->pid, SIGKILL);
                (void) waitid(P_PIDFD, (id_t) p->pid.fd, &(siginfo_t) {}, WEXITED);
        }
        pidref_done(&p->pid);
        /* Gone: what it wrote is in the pipe (a pipe's worth at most), read
         * without waiting (a writer it left would hold the pipe open). */
        if (p->report_fd >= 0)
                read_reports(p);
        p->report_fd = safe_close(p->report_fd);
        if (p->changed && dir_fd >= 0)
                write_denied(p, dir_fd);
}

void proxy_process_done(ProxyProcess *p) {
        pidref_done(&p->pid);
        p->report_fd = safe_close(p->report_fd);
        free(p->denied);
        p->denied = NULL;
}
