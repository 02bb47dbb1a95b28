/* SPDX-License-Identifier: MIT */
/* The supervisors' processes: each spawned held, as bgrund's own child in a
 * new session, watched and reaped (unless pinned), found again by what it
 * is; and the pool of them started ahead of time. What a job makes of its
 * supervisor (its readiness, its go) is job-start.c's. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <linux/sched.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "fd-passing.h"
#include "fileio.h"
#include "job.h"
#include "list.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "strv.h"
#include "supervisor-process.h"
#include "supervisor-protocol.h"

/* A spawned supervisor that is still bgrund's child, reaped as soon as its
 * pidfd says it exited, whichever way its job ended (or whether bgrund still
 * knows the job at all), so no zombie stays behind.
 *
 * Except while it is pinned: systemd may still move its PID into a scope
 * (StartTransientUnit with PIDs=), and a reaped PID could by then belong to
 * someone else. An exited pinned child stays a zombie, holding its PID,
 * until supervisor_unpin() says systemd is done with it. */
typedef struct SpawnedChild {
        struct SpawnedChild *next, *prev;
        Runtime *runtime;
        sd_event_source *source;
        char job_id[JOB_ID_MAX];
        bool pinned, exited;
        /* Idle in the pool, with no job yet: its pid and the two pipes'
         * ends that the job takes over. */
        bool pooled;
        pid_t pid;
        int ready_fd, go_fd;
} SpawnedChild;

static void supervisor_pool_forget(SpawnedChild *c);
static void supervisor_pool_free(Runtime *rt);

static void spawned_child_free(SpawnedChild *c) {
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
        if (!e && ready_fd >= 0) e = posix_spawn_file_actions_adddup2(&fa, ready_fd, ready_fd);
        if (!e && go_fd >= 0) e = posix_spawn_file_actions_adddup2(&fa, go_fd, go_fd);
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
        /* One of the pool is told its job on a socket, which can carry the
         * job's cgroup with it (supervisor-protocol.h). */
        if ((job_id ? pipe2(go, O_CLOEXEC) : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go)) < 0)
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
                /* Born in the job's cgroup: r is its pid. */
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

int supervisor_spawn_cleanup(Runtime *rt, const char *job_id) {
        char *argv[] = { (char *) rt->supervisor_path, (char *) "--remove-placeholders", (char *) "--job", (char *) job_id,
                         (char *) "--state-dir", (char *) rt->state_dir, NULL };
        char *envp[ELEMENTSOF(forwarded_environment) + 1] = {};
        char storage[ELEMENTSOF(forwarded_environment)][512];
        for (size_t i = 0, n = 0; i < ELEMENTSOF(forwarded_environment); i++) {
                const char *v = getenv(forwarded_environment[i]);
                if (v && snprintf(storage[n], sizeof storage[n], "%s=%s", forwarded_environment[i], v) < (int) sizeof storage[n])
                        envp[n] = storage[n], n++;
        }
        pid_t pid;
        int r = spawn(rt->supervisor_path, argv, envp, -EBADF, -EBADF, &pid);
        if (r < 0)
                return r;
        _cleanup_close_ int pidfd = pidfd_open(pid, 0);
        if (pidfd < 0) {
                r = negative_errno();
                (void) waitpid(pid, NULL, 0);
                return r;
        }
        return spawned_child_watch(rt, pidfd, job_id, false, NULL);
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

/* --- the pool ------------------------------------------------------------ */

/* Supervisors started ahead of time (bgrun-supervisor --pooled): exec'd and
 * linked, each waits on its go socket for the id of the job it is to run,
 * and runs it itself (moved into its containment by systemd) or forks a
 * child into the job's cgroup that runs it (cgroupfs). One taken spares a
 * Launch the supervisor's exec and dynamic linking, and its fsync of the
 * spec then runs while the containment is readied. Refilled only when
 * Launches pause (supervisor_pool_refill()); a burst of them empties the
 * pool and spawns the rest as before. An idle one leaves on EOF of its go
 * socket, so none outlives bgrund. */
#define SUPERVISOR_POOL_SIZE 4

typedef struct SupervisorPool {
        SpawnedChild *idle[SUPERVISOR_POOL_SIZE];
        unsigned n_idle;
        sd_event_source *refill;
} SupervisorPool;

static void supervisor_pool_forget(SpawnedChild *c) {
        SupervisorPool *p = c->runtime->supervisor_pool;
        for (unsigned i = 0; p && i < p->n_idle; i++)
                if (p->idle[i] == c) {
                        p->idle[i] = p->idle[--p->n_idle];
                        break;
                }
        c->pooled = false;
        c->ready_fd = safe_close(c->ready_fd);
        c->go_fd = safe_close(c->go_fd);
}

static int pool_fill_one(Runtime *rt) {
        SupervisorPool *p = rt->supervisor_pool;
        pid_t pid;
        int pidfd, ready_fd, go_fd;
        int r = supervisor_spawn_process(rt, NULL, -EBADF, &pid, &pidfd, &ready_fd, &go_fd);
        if (r < 0)
                return r;
        SpawnedChild *c;
        r = spawned_child_watch(rt, pidfd, "", false, &c);
        if (r < 0) {
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitpid(pid, NULL, 0);
                safe_close(pidfd);
                safe_close(ready_fd);
                safe_close(go_fd);
                return r;
        }
        safe_close(pidfd);
        c->pooled = true;
        c->pid = pid;
        c->ready_fd = ready_fd;
        c->go_fd = go_fd;
        p->idle[p->n_idle++] = c;
        return 0;
}

/* Started one at a time, each once bgrund has neither started nor answered
 * a Launch for a while: a supervisor's start (its exec, its linking) then
 * competes for the CPU with no job's start or end. */
#define POOL_QUIET_USEC (20 * USEC_PER_MSEC)

static int on_pool_refill(sd_event_source *s, uint64_t usec, void *userdata) {
        Runtime *rt = userdata;
        SupervisorPool *p = rt->supervisor_pool;
        int r = p->n_idle < SUPERVISOR_POOL_SIZE ? pool_fill_one(rt) : 0;
        if (r < 0)
                log_debug_errno(r, "Cannot start a supervisor ahead of time: %m");
        if (r >= 0 && p->n_idle < SUPERVISOR_POOL_SIZE) {
                (void) sd_event_source_set_time_relative(s, POOL_QUIET_USEC);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

void supervisor_pool_refill(Runtime *rt) {
        SupervisorPool *p = rt->supervisor_pool;
        if (!p) {
                p = rt->supervisor_pool = calloc(1, sizeof(SupervisorPool));
                if (!p)
                        return; /* no pool: every Launch spawns its own */
        }
        if (!p->refill) {
                if (sd_event_add_time_relative(rt->event, &p->refill, CLOCK_MONOTONIC, POOL_QUIET_USEC,
                                               USEC_PER_MSEC, on_pool_refill, rt) < 0)
                        return;
        } else
                (void) sd_event_source_set_time_relative(p->refill, POOL_QUIET_USEC);
        (void) sd_event_source_set_enabled(p->refill, SD_EVENT_ONESHOT);
}

/* How long bgrund waits for a pooled supervisor's fork into a job's cgroup:
 * an idle process of ours, which only forks, so never near this. */
#define POOL_FORK_TIMEOUT_MSEC 5000

/* The pooled supervisor's answer to POOL_FORK_INTO_CGROUP: its child's
 * pidfd, or why there is none. */
static int pool_fork_answer(int go_fd, int *ret_pidfd) {
        struct pollfd pfd = { .fd = go_fd, .events = POLLIN };
        int r;
        do
                r = poll(&pfd, 1, POOL_FORK_TIMEOUT_MSEC);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return negative_errno();
        if (r == 0)
                return -ETIMEDOUT;
        char tag;
        int fd;
        r = fd_receive(go_fd, MSG_DONTWAIT, &tag, &fd);
        if (r <= 0)
                return r == 0 ? -ECONNRESET : r;
        if (tag == POOL_FORKED && fd >= 0) {
                *ret_pidfd = fd;
                return 0;
        }
        safe_close(fd);
        unsigned char e = 0;
        if (tag == POOL_FORK_FAILED && recv(go_fd, &e, 1, MSG_DONTWAIT) == 1 && e > 0)
                return -(int) e;
        return -EBADMSG;
}

/* What a pooled supervisor's fork can leave in a supervisor cgroup: its
 * child, once (a pooled supervisor is bgrund's own program and forks once
 * before it answers). A cgroup holding more is none it made: its
 * processes are left alone, unread beyond this bound. */
#define POOL_STRAYS_MAX 16

/* Anything but its child's pidfd (no answer in time, a refusal, its end):
 * the pooled supervisor is killed and waited for, so that a child it may
 * have made is in cgroup_fd by now or never will be; such a child, held
 * still (it never got its go byte), is killed and reaped as the child of
 * ours it is. */
static void pool_fork_abandon(SpawnedChild *c, int cgroup_fd) {
        Runtime *rt = c->runtime;
        int pidfd = sd_event_source_get_io_fd(c->source);
        (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
        (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t) {}, WEXITED);
        spawned_child_free(c);

        _cleanup_free_ pid_t *pids = NULL;
        size_t n;
        if (cgroup_read_pids(cgroup_fd, POOL_STRAYS_MAX, &pids, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int fd = pidfd_open(pids[i], 0);
                if (fd < 0)
                        continue;
                (void) pidfd_send_signal(fd, SIGKILL, NULL, 0);
                if (spawned_child_watch(rt, fd, "", false, NULL) < 0)
                        (void) waitid(P_PIDFD, (id_t) fd, &(siginfo_t) {}, WEXITED);
        }
}

/* Have idle supervisor c fork j's supervisor into plan's cgroup: the
 * child's pid and pidfd, watched as j's. c leaves either way, and nothing
 * of j can have run when this fails. */
static int pool_fork_into(SpawnedChild *c, Job *j, const SpawnPlan *plan, pid_t *ret_pid, int *ret_pidfd,
                          int *ret_ready_fd, int *ret_go_fd) {
        _cleanup_close_ int pidfd = -EBADF;
        int r = loop_write(c->go_fd, j->id, JOB_ID_LEN);
        if (r >= 0)
                r = fd_send(c->go_fd, POOL_FORK_INTO_CGROUP, plan->cgroup_fd, 0);
        if (r >= 0)
                r = pool_fork_answer(c->go_fd, &pidfd);
        if (r < 0) {
                pool_fork_abandon(c, plan->cgroup_fd);
                return r;
        }
        /* It exits now, and is reaped; its pipes are the child's. */
        _cleanup_close_ int ready_fd = TAKE_FD(c->ready_fd), go_fd = TAKE_FD(c->go_fd);
        supervisor_pool_forget(c);
        pid_t pid = 0;
        r = pidfd_get_pid(pidfd, &pid);
        if (r >= 0)
                r = spawned_child_watch(j->runtime, pidfd, j->id, plan->pin, NULL);
        if (r < 0) {
                /* Held still: gone, and reaped, before anything else starts j. */
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t) {}, WEXITED);
                return r;
        }
        *ret_pid = pid;
        *ret_pidfd = TAKE_FD(pidfd);
        *ret_ready_fd = TAKE_FD(ready_fd);
        *ret_go_fd = TAKE_FD(go_fd);
        return 0;
}

/* Hand an idle supervisor job j: to run itself (its id down its go socket)
 * or, where j is to be born in a cgroup, to fork into it. Failing here
 * costs only this supervisor. */
int supervisor_pool_take(Job *j, const SpawnPlan *plan, pid_t *ret_pid, int *ret_pidfd, int *ret_ready_fd,
                         int *ret_go_fd) {
        Runtime *rt = j->runtime;
        SupervisorPool *p = rt->supervisor_pool;
        if (!p || p->n_idle == 0)
                return -EAGAIN;
        SpawnedChild *c = p->idle[p->n_idle - 1];

        if (plan->cgroup_fd >= 0)
                return pool_fork_into(c, j, plan, ret_pid, ret_pidfd, ret_ready_fd, ret_go_fd);

        _cleanup_close_ int pidfd = fcntl(sd_event_source_get_io_fd(c->source), F_DUPFD_CLOEXEC, 3);
        if (pidfd < 0)
                return negative_errno();
        char msg[JOB_ID_MAX + 1];
        int n = snprintf(msg, sizeof msg, "%s%c", j->id, POOL_RUN_HERE);
        int r = loop_write(c->go_fd, msg, (size_t) n);
        if (r < 0) {
                /* Unpinned still: reaped as soon as it is seen to die. */
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                supervisor_pool_forget(c);
                return r;
        }
        *ret_pid = c->pid;
        *ret_ready_fd = TAKE_FD(c->ready_fd);
        *ret_go_fd = TAKE_FD(c->go_fd);
        *ret_pidfd = TAKE_FD(pidfd);
        supervisor_pool_forget(c);
        strcpy(c->job_id, j->id);
        c->pinned = plan->pin;
        return 0;
}

static void supervisor_pool_free(Runtime *rt) {
        SupervisorPool *p = rt->supervisor_pool;
        if (!p)
                return;
        /* An idle one holds nothing of any job: gone with us, and reaped. */
        while (p->n_idle > 0) {
                SpawnedChild *c = p->idle[0];
                int pidfd = sd_event_source_get_io_fd(c->source);
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t) {}, WEXITED);
                spawned_child_free(c);
        }
        sd_event_source_disable_unref(p->refill);
        free(p);
        rt->supervisor_pool = NULL;
}
