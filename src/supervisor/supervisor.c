/* SPDX-License-Identifier: MIT */
/*
 * bgrun-supervisor: runs one job's command inside its containment and
 * publishes the result. It needs no live bgrund: it reads the job's spec from
 * the store, runs `/bin/sh -c COMMAND` as the job's owner, enforces the
 * wall-clock limit, and at the end kills whatever is left, confirms the
 * containment empty and writes result.json.
 *
 * bgrund spawns it (supervisor-spawn.c) with a readiness pipe: one byte once
 * the command was exec'd and run.json written, EOF without it when setup
 * failed. SIGTERM means "kill the job", and the supervisor's own exit (seen
 * through its pidfd) means result.json is final.
 *
 * Systemd mechanism: spawned held (--go-fd); bgrund lets it go once systemd
 * has moved it into the job's transient scope (Delegate=yes). It moves itself
 * into <scope>/supervisor and the command into <scope>/payload, so a teardown
 * by cgroup.kill of payload never hits it.
 *
 * Process-group mechanism: the command leads its own session and process
 * group. As their subreaper the supervisor kills its whole process tree
 * through pidfds, setsid()'d children included, but this is not
 * containment: a process handed to another service escapes, and nothing
 * limits resources.
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/keyctl.h>

#include "cgroup.h"
#include "environment.h"
#include "grant.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"
#include "pidref.h"
#include "privilege.h"
#include "publish.h"
#include "process-tree.h"



#define TEARDOWN_TIMEOUT_USEC (10 * USEC_PER_SEC)

typedef struct Supervisor {
        int dir_fd;
        JobSpec spec;
        char *unit_cgroup;  /* systemd mechanism: the unit's cgroup */
        char *payload_path; /* its payload child */
        int payload_fd;
        int output_fd;
        int ready_fd; /* readiness pipe to bgrund */
        PidRef child;
} Supervisor;

static void supervisor_done(Supervisor *s) {
        safe_close(s->dir_fd);
        safe_close(s->payload_fd);
        safe_close(s->output_fd);
        safe_close(s->ready_fd);
        job_spec_done(&s->spec);
        free(s->unit_cgroup);
        free(s->payload_path);
        pidref_done(&s->child);
}

static int fail_setup(Supervisor *s, int error, const char *step) {
        return publish_setup_failure(s->dir_fd, &s->spec, error, step);
}

static int setup_cgroups(Supervisor *s) {
        int r = cgroup_path_of_pid(0, &s->unit_cgroup);
        if (r < 0)
                return r;
        /* Never split a cgroup that is not the job's own scope, the one its
         * grant names (bgrund's, say, had the move not happened). */
        _cleanup_(grant_done) Grant g = {};
        r = grant_read(s->dir_fd, &g);
        if (r < 0)
                return r;
        if (!g.cgroup || !streq(g.cgroup, s->unit_cgroup))
                return -EREMCHG;

        _cleanup_close_ int unit_fd = -EBADF, sup_fd = -EBADF;
        r = cgroup_open(s->unit_cgroup, &unit_fd);
        if (r < 0)
                return r;
        /* Leave the unit's root so it holds no process itself, then make the
         * payload's cgroup beside ours. */
        r = cgroup_create_child(unit_fd, "supervisor", &sup_fd);
        if (r < 0)
                return r;
        r = cgroup_attach(sup_fd, 0);
        if (r < 0)
                return r;
        r = cgroup_create_child(unit_fd, "payload", &s->payload_fd);
        if (r < 0)
                return r;
        if (asprintf(&s->payload_path, "%s/payload", streq(s->unit_cgroup, "/") ? "" : s->unit_cgroup) < 0)
                return -ENOMEM;
        return 0;
}

typedef struct ChildFailure {
        int error;
        char step[48];
} ChildFailure;

/* In the forked child: enter the containment, become the owner, exec. On any
 * failure report which step failed over the cloexec pipe and exit. */
static _Noreturn void run_child(Supervisor *s, char **env, int report_fd) {
        ChildFailure f = {};
        int r;

        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* An ignored signal stays ignored across exec; the command gets the
         * usual SIGPIPE. */
        signal(SIGPIPE, SIG_DFL);

        if (s->payload_fd >= 0) {
                r = cgroup_attach(s->payload_fd, 0);
                if (r < 0) {
                        f = (ChildFailure) { r, "enter the job's cgroup" };
                        goto fail;
                }
        }
        if (setsid() < 0) {
                f = (ChildFailure) { negative_errno(), "start a session" };
                goto fail;
        }
        /* A session keyring of its own: bgrund's (which every supervisor
         * inherits) must not be shared between jobs, or between owners. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS) {
                f = (ChildFailure) { negative_errno(), "join a new session keyring" };
                goto fail;
        }

        int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(s->output_fd, STDOUT_FILENO) < 0 ||
            dup2(s->output_fd, STDERR_FILENO) < 0) {
                f = (ChildFailure) { negative_errno(), "connect stdio" };
                goto fail;
        }

        r = drop_privileges(s->spec.uid, s->spec.gid, s->spec.groups, (int) s->spec.n_groups);
        if (r < 0) {
                f = (ChildFailure) { r, "drop privileges" };
                goto fail;
        }
        /* As the owner, so a directory the owner may not enter fails here. */
        if (chdir(s->spec.cwd) < 0) {
                f = (ChildFailure) { negative_errno(), "change to the working directory" };
                goto fail;
        }

        char *argv[] = { (char *) "sh", (char *) "-c", s->spec.command, NULL };
        execve("/bin/sh", argv, env);
        f = (ChildFailure) { negative_errno(), "execute /bin/sh" };
fail:
        (void) !write(report_fd, &f, sizeof f);
        _exit(127);
}

/* Kill everything of the job: the whole payload cgroup, or for the process
 * group mechanism the leader through its pidfd and then every descendant. */
static void kill_job(Supervisor *s) {
        if (s->payload_fd >= 0) {
                int r = cgroup_kill(s->payload_fd);
                if (r < 0)
                        log_warning_errno(r, "cgroup.kill failed for %s: %m", s->payload_path);
                return;
        }
        if (s->child.fd >= 0)
                (void) pidref_kill(&s->child, SIGKILL);
        /* As a subreaper every process the job forked, even one that left
         * the process group with setsid(), is still below us. */
        (void) process_tree_kill_descendants();
}

/* As a child subreaper we inherit the job's orphans (double forks, setsid);
 * reap them so no zombie lingers and group checks see only the living. */
static void reap_orphans(pid_t keep) {
        for (;;) {
                siginfo_t si = {};
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
                        return;
                if (si.si_pid == keep)
                        return; /* the main process is reaped through its pidfd */
                (void) waitpid(si.si_pid, NULL, 0);
        }
}

static bool teardown_confirm(Supervisor *s, TeardownMethod *method) {
        if (s->payload_fd >= 0) {
                *method = TEARDOWN_CGROUP_KILL;
                (void) cgroup_kill(s->payload_fd);
                int r = cgroup_wait_empty(s->payload_fd, TEARDOWN_TIMEOUT_USEC);
                if (r < 0)
                        log_warning_errno(r, "Cgroup %s not confirmed empty: %m", s->payload_path);
                return r == 0;
        }
        *method = TEARDOWN_PROCESS_TREE;
        uint64_t deadline = now_monotonic_usec() + TEARDOWN_TIMEOUT_USEC;
        for (unsigned i = 0;; i++) {
                int alive = process_tree_kill_descendants();
                reap_orphans(0);
                if (alive == 0)
                        return true;
                if (now_monotonic_usec() > deadline)
                        return false;
                /* No event tells when a process tree empties; back off gently. */
                usleep(i < 10 ? 1000 : 20000);
        }
}

static int make_timerfd(uint64_t usec) {
        int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        struct itimerspec its = {
                .it_value.tv_sec = (time_t) (usec / USEC_PER_SEC),
                .it_value.tv_nsec = (long) (usec % USEC_PER_SEC) * 1000,
        };
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
                its.it_value.tv_nsec = 1;
        if (timerfd_settime(fd, 0, &its, NULL) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

static int supervise(Supervisor *s) {
        int r;

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        _cleanup_close_ int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sig_fd < 0)
                return fail_setup(s, negative_errno(), "signalfd");

        /* Orphans of the job become our children, not PID 1's. */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return fail_setup(s, negative_errno(), "become a child subreaper");

        if (s->spec.mechanism == MECHANISM_SYSTEMD) {
                r = setup_cgroups(s);
                if (r == -EREMCHG)
                        return fail_setup(s, -EPERM, "set up the job's cgroup: the supervisor is not in the job's scope");
                if (r < 0)
                        return fail_setup(s, r, "set up the job's cgroup");
        }

        r = job_store_open_output(s->dir_fd, O_WRONLY | O_APPEND, &s->output_fd);
        if (r < 0)
                return fail_setup(s, r, "open the output file");

        _cleanup_strv_free_ char **env = NULL;
        r = job_environment(&s->spec, &env);
        if (r < 0)
                return fail_setup(s, r, "build the environment");

        int report[2];
        if (pipe2(report, O_CLOEXEC) < 0)
                return fail_setup(s, negative_errno(), "pipe");

        pid_t pid = fork();
        if (pid < 0) {
                r = negative_errno();
                safe_close(report[0]);
                safe_close(report[1]);
                return fail_setup(s, r, "fork");
        }
        if (pid == 0) {
                safe_close(report[0]);
                run_child(s, env, report[1]);
        }
        safe_close(report[1]);
        _cleanup_close_ int report_fd = report[0];

        r = pidref_set_pid(&s->child, pid);
        if (r < 0) {
                /* Without a pidfd nothing may be signalled; our own unreaped
                 * child cannot be recycled, so reaping it is still safe. */
                log_error_errno(r, "Cannot get a pidfd for the job's process: %m");
                kill_job(s);
                (void) waitpid(pid, NULL, 0);
                return fail_setup(s, r, "open a pidfd for the command");
        }

        /* Wait for exec (the pipe closes) or a reported failure. */
        ChildFailure f;
        ssize_t n;
        do
                n = read(report_fd, &f, sizeof f);
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t) sizeof f) {
                /* It never exec'd, so it forked nothing, and it exits
                 * after reporting: reaping it is the whole teardown. */
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                return fail_setup(s, f.error, f.step);
        }

        JobRun run = {
                .pid = pid,
                .supervisor_pid = getpid(),
                .cgroup = s->payload_path ?: (char *) "",
                .started_at = now_realtime_usec(),
        };
        strcpy(run.start_token, s->child.token);
        r = process_start_token(getpid(), -EBADF, run.supervisor_token, sizeof run.supervisor_token);
        if (r >= 0)
                r = job_store_write_run(s->dir_fd, &run);
        if (r < 0) {
                kill_job(s);
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                TeardownMethod method;
                bool dead = teardown_confirm(s, &method);
                /* No run.json, so no reader sees the job as contained. */
                (void) publish_outcome(s->dir_fd, &s->spec, &(JobOutcome) {
                        .status = JOB_FAILED,
                        .exit_code = 1,
                        .executed = true,
                        .run = NULL,
                        .dead = dead,
                        .method = method,
                        .reason = "cannot record the running job",
                });
                return log_error_errno(r, "Failed to record the running job: %m");
        }

        if (s->ready_fd >= 0) {
                (void) !write(s->ready_fd, "R", 1);
                s->ready_fd = safe_close(s->ready_fd);
        }

        _cleanup_close_ int timer_fd = -EBADF;
        if (s->spec.max_runtime_usec > 0) {
                timer_fd = make_timerfd(s->spec.max_runtime_usec);
                if (timer_fd < 0)
                        log_warning_errno(timer_fd, "No wall-clock limit: timerfd failed: %m");
        }

        bool killed = false, timed_out = false;
        siginfo_t si = {};
        for (;;) {
                struct pollfd p[3] = {
                        { .fd = s->child.fd, .events = POLLIN },
                        { .fd = sig_fd, .events = POLLIN },
                        { .fd = timer_fd, .events = POLLIN },
                };
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        log_error_errno(r, "poll failed: %m");
                        kill_job(s);
                        killed = true;
                        break; /* to the teardown, which reaps what is left */
                }
                if (p[1].revents) {
                        struct signalfd_siginfo ssi;
                        bool stop = false;
                        while (read(sig_fd, &ssi, sizeof ssi) == sizeof ssi)
                                if (ssi.ssi_signo != SIGCHLD)
                                        stop = true;
                        reap_orphans(s->child.pid);
                        if (stop && !killed && !timed_out) {
                                killed = true;
                                kill_job(s);
                        }
                }
                if (p[2].revents) {
                        uint64_t ticks;
                        (void) !read(timer_fd, &ticks, sizeof ticks);
                        timer_fd = safe_close(timer_fd);
                        if (!killed && !timed_out) {
                                timed_out = true;
                                kill_job(s);
                        }
                }
                if (p[0].revents) {
                        if (waitid(P_PIDFD, (id_t) s->child.fd, &si, WEXITED) == 0)
                                break;
                        if (errno != EINTR && errno != EAGAIN) {
                                r = log_error_errno(negative_errno(), "waitid failed: %m");
                                break;
                        }
                }
        }

        /* The shell is gone; whatever it left behind goes with it. */
        TeardownMethod method;
        bool dead = teardown_confirm(s, &method);
        reap_orphans(0);

        r = publish_outcome(s->dir_fd, &s->spec, &(JobOutcome) {
                .status = timed_out ? JOB_TIMED_OUT : killed ? JOB_KILLED : JOB_EXITED,
                .exit_code = si.si_code == CLD_EXITED ? si.si_status : -1,
                .signal = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED ? si.si_status : 0,
                .executed = true,
                .run = &run,
                .dead = dead,
                .method = method,
        });
        if (r < 0)
                return r;

        if (dead && s->payload_fd >= 0 && s->unit_cgroup) {
                _cleanup_close_ int unit_fd = -EBADF;
                if (cgroup_open(s->unit_cgroup, &unit_fd) >= 0)
                        (void) unlinkat(unit_fd, "payload", AT_REMOVEDIR);
        }
        return 0;
}

/* Held until bgrund says the containment is ready. EOF means bgrund gave the
 * attempt up or died: nothing ran, so there is nothing to publish, and a
 * restarted bgrund records the job as never started. */
static int wait_for_go(int go_fd) {
        char c;
        ssize_t n;
        do
                n = read(go_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        safe_close(go_fd);
        if (n == 1)
                return 0;
        log_info("bgrund gave up the job before its containment was ready; nothing was run");
        return -ECANCELED;
}

static int run(int argc, char **argv) {
        static const struct option options[] = {
                { "job", required_argument, NULL, 'j' },
                { "state-dir", required_argument, NULL, 'd' },
                { "ready-fd", required_argument, NULL, 'r' },
                { "go-fd", required_argument, NULL, 'g' },
                { "nofile-soft", required_argument, NULL, 'n' },
                {}
        };
        const char *id = NULL, *state_dir = BGRUN_STATE_DIR;
        int ready_fd = -EBADF, go_fd = -EBADF;
        int c;
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'j': id = optarg; break;
                case 'd': state_dir = optarg; break;
                case 'r': ready_fd = atoi(optarg); break;
                case 'g': go_fd = atoi(optarg); break;
                case 'n': {
                        /* bgrund raised its own; the command gets what bgrund got. */
                        struct rlimit rl;
                        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0) {
                                rl.rlim_cur = MIN((rlim_t) strtoull(optarg, NULL, 10), rl.rlim_max);
                                (void) setrlimit(RLIMIT_NOFILE, &rl);
                        }
                        break;
                }
                default: return -EINVAL;
                }
        if (!job_id_is_valid(id))
                return log_error_errno(-EINVAL,
                                       "Usage: bgrun-supervisor --job ID [--state-dir DIR] [--ready-fd FD] [--go-fd FD] [--nofile-soft N]");

        _cleanup_(supervisor_done) Supervisor s = {
                .dir_fd = -EBADF, .payload_fd = -EBADF, .output_fd = -EBADF, .child = PIDREF_NULL,
                .ready_fd = ready_fd >= 0 ? ready_fd : -EBADF,
        };
        /* bgrund passed these across exec; the command must not inherit them. */
        if (s.ready_fd >= 0)
                (void) fcntl(s.ready_fd, F_SETFD, FD_CLOEXEC);
        if (go_fd >= 0)
                (void) fcntl(go_fd, F_SETFD, FD_CLOEXEC);
        strcpy(s.spec.id, id);

        _cleanup_close_ int jobs_fd = -EBADF;
        int r = job_store_open(state_dir, &jobs_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to open the job store %s: %m", state_dir);
        r = job_store_open_job(jobs_fd, id, &s.dir_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to open job %s: %m", id);
        r = job_store_read_spec(s.dir_fd, &s.spec);
        if (r < 0)
                return fail_setup(&s, r, "read the job's spec");

        if (go_fd >= 0) {
                r = wait_for_go(go_fd);
                if (r < 0)
                        return r;
        }
        return supervise(&s);
}

int main(int argc, char **argv) {
        /* What bgrund runs with is not ours to keep: the usual umask for the
         * cgroups and files made here and for the command, and no death by
         * SIGPIPE when bgrund, the other end of the readiness pipe, is gone. */
        umask(0022);
        signal(SIGPIPE, SIG_IGN);
        log_setup("bgrun-supervisor", LOG_TARGET_AUTO);
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
