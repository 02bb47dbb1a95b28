/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <linux/sched.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "job.h"
#include "list.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "strv.h"
#include "supervisor-protocol.h"
#include "supervisor-spawn.h"
#include "supervisor-spawn-private.h"

/* From spawn to readiness: what the supervisor's setup may take at most. */
#define START_TIMEOUT_USEC (30 * USEC_PER_SEC)


void spawned_child_free(SpawnedChild *c) {
        supervisor_pool_forget(c);
        LIST_REMOVE(c->runtime->children, c);
        sd_event_source_disable_unref(c->source);
        free(c);
}

static void spawned_child_reap(SpawnedChild *c) {
        (void) waitid(P_PIDFD, (id_t) sd_event_source_get_io_fd(c->source), &(siginfo_t) {}, WEXITED | WNOHANG);
        spawned_child_free(c);
}

static int on_child_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        SpawnedChild *c = userdata;
        if (c->pinned) {
                /* Readable for as long as it is a zombie: stop listening. */
                c->exited = true;
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        spawned_child_reap(c);
        return 0;
}

int spawned_child_watch(Runtime *rt, int pidfd, const char *job_id, bool pin, SpawnedChild **ret) {
        _cleanup_close_ int fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negative_errno();
        SpawnedChild *c = calloc(1, sizeof(SpawnedChild));
        if (!c)
                return -ENOMEM;
        c->ready_fd = c->go_fd = -EBADF;
        int r = sd_event_add_io(rt->event, &c->source, fd, EPOLLIN, on_child_exit, c);
        if (r < 0) {
                free(c);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(c->source, true);
        TAKE_FD(fd);
        c->runtime = rt;
        strcpy(c->job_id, job_id);
        c->pinned = pin;
        LIST_PREPEND(rt->children, c);
        if (ret)
                *ret = c;
        return 0;
}

void supervisor_unpin(Runtime *rt, const char *job_id) {
        for (SpawnedChild *c = rt->children; c; c = c->next)
                if (c->pinned && streq(c->job_id, job_id)) {
                        c->pinned = false;
                        if (c->exited)
                                spawned_child_reap(c);
                        return;
                }
}

void supervisor_children_free(Runtime *rt) {
        supervisor_pool_free(rt);
        while (rt->children)
                spawned_child_free(rt->children);
}

/* How long a supervisor that refused its job may take to exit: it only
 * closes what it opened. */
#define REFUSED_EXIT_TIMEOUT_USEC (5 * USEC_PER_SEC)

static void refused_done(Job *j, bool exited) {
        j->live->ready_source = sd_event_source_disable_unref(j->live->ready_source);
        j->live->start_timer = sd_event_source_disable_unref(j->live->start_timer);
        if (!exited) {
                job_start_failed(j, false, "the supervisor that refused the job did not exit");
                return;
        }
        _cleanup_free_ char *message = NULL;
        if (j->live->refused_limits) /* EnforceLimits */
                return job_start_refused(j, LAUNCH_LIMITS_NOT_ENFORCED, job_limits_refusal(j->live->refused_limits, &message));
        /* Worded as bgrund's own check of cwd was, for every way of failing. */
        if (asprintf(&message, "cwd '%s' does not exist or is not a directory that user %s can enter",
                     j->live->spec.cwd, j->live->spec.user) < 0)
                message = NULL;
        job_start_refused(j, -EINVAL, message ?: "cwd does not exist or is not a directory that its user can enter");
}

static int on_refused_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        refused_done(userdata, true);
        return 0;
}

static int on_refused_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        refused_done(userdata, false);
        return 0;
}

/* The supervisor refused the job (SUPERVISOR_CWD_REFUSED): it ran nothing
 * and exits; the job goes once it is gone, so that nothing of it outlives
 * the Launch's answer. */
static void await_refusing_supervisor(Job *j) {
        Runtime *rt = j->runtime;
        _cleanup_close_ int fd = fcntl(j->live->spawned_pidfd, F_DUPFD_CLOEXEC, 3);
        int r = fd < 0 ? negative_errno()
                       : sd_event_add_io(rt->event, &j->live->ready_source, fd, EPOLLIN, on_refused_exit, j);
        if (r >= 0) {
                (void) sd_event_source_set_io_fd_own(j->live->ready_source, true);
                TAKE_FD(fd);
                r = sd_event_add_time_relative(rt->event, &j->live->start_timer, CLOCK_MONOTONIC,
                                               REFUSED_EXIT_TIMEOUT_USEC, 0, on_refused_timeout, j);
        }
        if (r < 0) {
                log_warning_errno(r, "Job %s: cannot wait for its refusing supervisor: %m", j->id);
                refused_done(j, false);
        }
}

/* n: what a read of the readiness pipe gave, c the bytes (one write). */
static void ready_done(Job *j, ssize_t n, const char c[static 2]) {
        j->live->ready_source = sd_event_source_disable_unref(j->live->ready_source);
        j->live->start_timer = sd_event_source_disable_unref(j->live->start_timer);
        j->live->go_fd = safe_close(j->live->go_fd);
        if (n == 2 && c[0] == SUPERVISOR_LIMITS_REFUSED) {
                j->live->refused_limits = (unsigned char) c[1] ?: ~0U;
                await_refusing_supervisor(j);
        } else if (n == 1 && c[0] == SUPERVISOR_CWD_REFUSED)
                await_refusing_supervisor(j);
        else if (n == 1)
                job_started(j);
        else
                job_start_failed(j, true, "the supervisor exited before the command ran");
}

static int on_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char c[2] = {};
        ssize_t n = read(fd, c, sizeof c);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        ready_done(userdata, n, c);
        return 0;
}

static int on_start_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        /* Readiness that came in the same turn of the loop still counts. */
        char c[2] = {};
        ssize_t n = read(sd_event_source_get_io_fd(j->live->ready_source), c, sizeof c);
        if (n >= 0) {
                ready_done(j, n, c);
                return 0;
        }
        j->live->start_timer = sd_event_source_disable_unref(j->live->start_timer);
        job_start_failed(j, true, "the supervisor did not report readiness in time");
        return 0;
}

/* A new session, default signal dispositions and an empty mask (sd-event
 * blocks some in bgrund); stdin and stdout on /dev/null, stderr stays
 * bgrund's (the journal); the two pipe ends kept across exec. */
static int spawn(const char *path, char **argv, char **envp, int ready_fd, int go_fd, pid_t *ret_pid) {
        posix_spawnattr_t attr;
        posix_spawn_file_actions_t fa;
        int r = -posix_spawnattr_init(&attr);
        if (r < 0)
                return r;
        r = -posix_spawn_file_actions_init(&fa);
        if (r < 0) {
                posix_spawnattr_destroy(&attr);
                return r;
        }
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        /* adddup2 of an fd onto itself clears its FD_CLOEXEC in the child only. */
        int e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (!e) e = posix_spawnattr_setsigmask(&attr, &none);
        if (!e) e = posix_spawnattr_setsigdefault(&attr, &all);
        if (!e) e = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        if (!e) e = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        if (!e) e = posix_spawn_file_actions_adddup2(&fa, ready_fd, ready_fd);
        if (!e) e = posix_spawn_file_actions_adddup2(&fa, go_fd, go_fd);
        if (!e) e = posix_spawn(ret_pid, path, &fa, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        return -e;
}

/* The same, born inside cgroup_fd (clone3 with CLONE_INTO_CGROUP), so it is
 * in its containment from its first instruction, with its pidfd from the
 * kernel. Returns the pid. */
static int spawn_into_cgroup(int cgroup_fd, const char *path, char **argv, char **envp, int ready_fd, int go_fd,
                             int *ret_pidfd) {
        int pidfd = -EBADF;
        struct clone_args args = {
                .flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
                .cgroup = (uint64_t) cgroup_fd,
        };
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                /* In the child, a copy of bgrund: only what is safe after fork. */
                sigset_t none;
                sigemptyset(&none);
                for (int sig = 1; sig < _NSIG; sig++)
                        (void) signal(sig, SIG_DFL);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (setsid() < 0 || null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 ||
                    dup2(null_fd, STDOUT_FILENO) < 0 || fcntl(ready_fd, F_SETFD, 0) < 0 ||
                    fcntl(go_fd, F_SETFD, 0) < 0)
                        _exit(127);
                execve(path, argv, envp);
                _exit(127);
        }
        *ret_pidfd = pidfd;
        return pid;
}

/* Sanitizer builds: their reports must reach the test run from every
 * process, the supervisor included, whose environment is otherwise empty. */
static const char *const forwarded_environment[] = {
        "SYSTEMD_LOG_LEVEL", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
};

/* What a pooled supervisor shows as its job until it gets one: as long as
 * an id, so that the id can take its place in its command line. */
static const char pool_placeholder[JOB_ID_MAX] = "----------";
_Static_assert(sizeof(pool_placeholder) == JOB_ID_LEN + 1, "the placeholder is as long as an id");

int supervisor_spawn_process(Runtime *rt, const char *job_id, int cgroup_fd, pid_t *ret_pid, int *ret_pidfd,
                             int *ret_ready_fd, int *ret_go_fd) {
        int ready[2], go[2];
        int r;

        if (pipe2(ready, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        _cleanup_close_ int ready_read = ready[0], ready_write = ready[1];
        if (pipe2(go, O_CLOEXEC) < 0)
                return negative_errno();
        _cleanup_close_ int go_read = go[0], go_write = go[1];

        char ready_arg[16], go_arg[16], nofile_arg[32];
        snprintf(ready_arg, sizeof ready_arg, "%d", ready_write);
        snprintf(go_arg, sizeof go_arg, "%d", go_read);
        snprintf(nofile_arg, sizeof nofile_arg, "%" PRIu64, rt->nofile_soft);
        char *argv[] = { (char *) rt->supervisor_path, (char *) "--job", (char *) (job_id ?: pool_placeholder),
                         (char *) "--state-dir", (char *) rt->state_dir,
                         (char *) "--ready-fd", ready_arg, (char *) "--go-fd", go_arg,
                         (char *) "--nofile-soft", nofile_arg, job_id ? NULL : (char *) "--pooled", NULL };
        _cleanup_strv_free_ char **envp = calloc(ELEMENTSOF(forwarded_environment) + 1, sizeof(char *));
        if (!envp)
                return -ENOMEM;
        for (size_t i = 0, n = 0; i < ELEMENTSOF(forwarded_environment); i++) {
                const char *v = getenv(forwarded_environment[i]);
                if (v && asprintf(&envp[n], "%s=%s", forwarded_environment[i], v) < 0)
                        return -ENOMEM;
                if (v)
                        n++;
        }

        pid_t pid = 0;
        _cleanup_close_ int pidfd = -EBADF;
        if (cgroup_fd >= 0) {
                r = spawn_into_cgroup(cgroup_fd, rt->supervisor_path, argv, envp, ready_write, go_read, &pidfd);
                if (r < 0)
                        return r;
                pid = r;
        } else {
                r = spawn(rt->supervisor_path, argv, envp, ready_write, go_read, &pid);
                if (r < 0)
                        return r;
                /* Our own unreaped child: its PID cannot have been recycled,
                 * so this pidfd is certainly it. */
                pidfd = pidfd_open(pid, 0);
                if (pidfd < 0) {
                        r = negative_errno();
                        /* Without a pidfd it is never signalled: held, it leaves
                         * on EOF having run nothing, and is reaped here, still
                         * our child. */
                        go_write = safe_close(go_write);
                        (void) waitpid(pid, NULL, 0);
                        return r;
                }
        }
        *ret_pid = pid;
        *ret_pidfd = TAKE_FD(pidfd);
        *ret_ready_fd = TAKE_FD(ready_read);
        *ret_go_fd = TAKE_FD(go_write);
        return 0;
}

int supervisor_spawn(Job *j, const SpawnPlan *plan) {
        Runtime *rt = j->runtime;
        pid_t pid = 0;
        int r;

        _cleanup_close_ int pidfd = -EBADF, ready_read = -EBADF, go_write = -EBADF;
        r = supervisor_pool_take(j, plan, &pid, &pidfd, &ready_read, &go_write);
        if (r < 0 && r != -EAGAIN)
                log_debug_errno(r, "Job %s: the supervisor started ahead of time could not take it (%m); "
                                "starting one", j->id);
        supervisor_pool_refill(rt); /* not while this Launch is under way */
        if (r < 0) {
                r = supervisor_spawn_process(rt, j->id, plan->cgroup_fd, &pid, &pidfd, &ready_read, &go_write);
                if (r < 0)
                        return r;
                r = spawned_child_watch(rt, pidfd, j->id, plan->pin, NULL);
                if (r < 0) {
                        (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                        (void) waitpid(pid, NULL, 0);
                        return r;
                }
        }

        r = sd_event_add_io(rt->event, &j->live->ready_source, ready_read, EPOLLIN, on_ready, j);
        if (r >= 0) {
                (void) sd_event_source_set_io_fd_own(j->live->ready_source, true);
                TAKE_FD(ready_read);
                r = sd_event_add_time_relative(rt->event, &j->live->start_timer, CLOCK_MONOTONIC, START_TIMEOUT_USEC,
                                               0, on_start_timeout, j);
        }
        if (r < 0) {
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                j->live->ready_source = sd_event_source_disable_unref(j->live->ready_source);
                return r;
        }
        j->live->spawned_pidfd = TAKE_FD(pidfd);
        j->live->go_fd = TAKE_FD(go_write);
        j->live->spawned_pid = pid;
        j->live->let_go = false;
        return 0;
}

int supervisor_let_go(Job *j) {
        if (j->live->go_fd < 0)
                return -EBADF;
        /* A failed write means the supervisor is gone and never read the
         * byte: it ran nothing, so another mechanism may still try. */
        ssize_t n = write(j->live->go_fd, "G", 1);
        int r = n == 1 ? 0 : n < 0 ? negative_errno() : -EIO;
        j->live->let_go = r >= 0;
        j->live->go_fd = safe_close(j->live->go_fd);
        return r;
}

void supervisor_abort(Job *j) {
        /* Killed before its go pipe closes, so one still held runs nothing;
         * one already let go may have started the command, and its caller
         * releases the containment (job_start_failed). */
        if (j->live->spawned_pidfd >= 0)
                (void) pidfd_send_signal(j->live->spawned_pidfd, SIGKILL, NULL, 0);
        j->live->spawned_pidfd = safe_close(j->live->spawned_pidfd);
        j->live->go_fd = safe_close(j->live->go_fd);
        j->live->ready_source = sd_event_source_disable_unref(j->live->ready_source);
        j->live->start_timer = sd_event_source_disable_unref(j->live->start_timer);
}

/* Whether pid runs the supervisor binary with "--job job_id" as uid. */
static bool is_supervisor_of(pid_t pid, const char *path, const char *job_id, uid_t uid) {
        char p[64], exe[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "/proc/%d", (int) pid);
        if (stat(p, &st) < 0 || st.st_uid != uid)
                return false;
        snprintf(p, sizeof p, "/proc/%d/exe", (int) pid);
        ssize_t n = readlink(p, exe, sizeof exe - 1);
        if (n <= 0)
                return false;
        exe[n] = '\0';
        if (!streq(exe, path))
                return false;

        snprintf(p, sizeof p, "/proc/%d/cmdline", (int) pid);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        char args[4096];
        ssize_t len = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
        if (len <= 0)
                return false;
        args[len] = '\0';
        for (const char *a = args; a < args + len; a += strlen(a) + 1)
                if (streq(a, "--job") && a + strlen(a) + 1 < args + len && streq(a + strlen(a) + 1, job_id))
                        return true;
        return false;
}

int supervisor_find(Runtime *rt, const char *job_id, PidRef *ret) {
        _cleanup_closedir_ DIR *dir = opendir("/proc");
        if (!dir)
                return negative_errno();
        struct dirent *de;
        while ((de = readdir(dir))) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                pid_t pid = (pid_t) atoi(de->d_name);
                if (!is_supervisor_of(pid, rt->supervisor_path, job_id, geteuid()))
                        continue;
                /* Pinned, then asked again: it is still the same process. */
                PidRef ref = PIDREF_NULL;
                if (pidref_set_pid(&ref, pid) < 0)
                        continue;
                if (!is_supervisor_of(pid, rt->supervisor_path, job_id, geteuid())) {
                        pidref_done(&ref);
                        continue;
                }
                *ret = ref;
                return 1;
        }
        return 0;
}
