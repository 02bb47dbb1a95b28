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
 * has moved it into the job's transient scope (Delegate=yes). How each
 * mechanism keeps and kills the job is payload-containment.h's business.
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

#include "environment.h"
#include "exec-child.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "payload-containment.h"
#include "pidref.h"
#include "privilege.h"
#include "publish.h"
#include "subreaper.h"
#include "time-util.h"

typedef struct Supervisor {
        int dir_fd;
        JobSpec spec;
        PayloadContainment containment;
        int output_fd;
        int ready_fd; /* readiness pipe to bgrund */
        PidRef child;
} Supervisor;

static void supervisor_done(Supervisor *s) {
        safe_close(s->dir_fd);
        safe_close(s->output_fd);
        safe_close(s->ready_fd);
        job_spec_done(&s->spec);
        payload_containment_done(&s->containment);
        pidref_done(&s->child);
}

static int fail_setup(Supervisor *s, int error, const char *step) {
        return publish_setup_failure(s->dir_fd, &s->spec, error, step);
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

/* run.json: the command runs, and where. */
static int record_run(Supervisor *s, JobRun *run) {
        const char *cgroup = s->containment.ops->cgroup(&s->containment);
        *run = (JobRun) {
                .pid = s->child.pid,
                .supervisor_pid = getpid(),
                .started_at = now_realtime_usec(),
        };
        if (cgroup) {
                run->cgroup = strdup(cgroup);
                if (!run->cgroup)
                        return -ENOMEM;
        }
        strcpy(run->start_token, s->child.token);
        int r = process_start_token(getpid(), -EBADF, run->supervisor_token, sizeof run->supervisor_token);
        if (r < 0)
                return r;
        return job_store_write_run(s->dir_fd, run);
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
        r = subreaper_enable();
        if (r < 0)
                return fail_setup(s, r, "become a child subreaper");

        PayloadContainment *c = &s->containment;
        r = payload_containment_init(c, s->spec.mechanism);
        if (r < 0)
                return fail_setup(s, r, "choose the job's containment");
        const char *step;
        r = c->ops->setup(c, s->dir_fd, &step);
        if (r < 0)
                return fail_setup(s, r, step);

        r = job_store_open_output(s->dir_fd, O_WRONLY | O_APPEND, &s->output_fd);
        if (r < 0)
                return fail_setup(s, r, "open the output file");

        _cleanup_strv_free_ char **env = NULL;
        r = job_environment(&s->spec, &env);
        if (r < 0)
                return fail_setup(s, r, "build the environment");

        pid_t pid;
        _cleanup_close_ int report_fd = -EBADF;
        r = exec_child_fork(&(ExecChild) {
                .spec = &s->spec,
                .containment = c,
                .output_fd = s->output_fd,
                .env = env,
        }, &pid, &report_fd, &step);
        if (r < 0)
                return fail_setup(s, r, step);

        r = pidref_set_pid(&s->child, pid);
        if (r < 0) {
                /* Without a pidfd nothing may be signalled; our own unreaped
                 * child cannot be recycled, so reaping it is still safe. */
                log_error_errno(r, "Cannot get a pidfd for the job's process: %m");
                c->ops->kill(c, &s->child);
                (void) waitpid(pid, NULL, 0);
                return fail_setup(s, r, "open a pidfd for the command");
        }

        ExecFailure f;
        if (exec_child_wait(report_fd, &f) > 0) {
                /* It never exec'd, so it forked nothing, and it exits
                 * after reporting: reaping it is the whole teardown. */
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                return fail_setup(s, f.error, f.step);
        }

        _cleanup_(job_run_done) JobRun run = {};
        r = record_run(s, &run);
        if (r < 0) {
                c->ops->kill(c, &s->child);
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                bool dead = c->ops->confirm_empty(c) == 0;
                /* No run.json, so no reader sees the job as contained. */
                (void) publish_outcome(s->dir_fd, &s->spec, &(JobOutcome) {
                        .status = JOB_FAILED,
                        .exit_code = 1,
                        .executed = true,
                        .run = NULL,
                        .dead = dead,
                        .method = c->ops->teardown_method,
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
                        c->ops->kill(c, &s->child);
                        killed = true;
                        break; /* to the teardown, which reaps what is left */
                }
                if (p[1].revents) {
                        struct signalfd_siginfo ssi;
                        bool stop = false;
                        while (read(sig_fd, &ssi, sizeof ssi) == sizeof ssi)
                                if (ssi.ssi_signo != SIGCHLD)
                                        stop = true;
                        subreaper_reap_orphans(s->child.pid);
                        if (stop && !killed && !timed_out) {
                                killed = true;
                                c->ops->kill(c, &s->child);
                        }
                }
                if (p[2].revents) {
                        uint64_t ticks;
                        (void) !read(timer_fd, &ticks, sizeof ticks);
                        timer_fd = safe_close(timer_fd);
                        if (!killed && !timed_out) {
                                timed_out = true;
                                c->ops->kill(c, &s->child);
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
        bool dead = c->ops->confirm_empty(c) == 0;
        subreaper_reap_orphans(0);

        r = publish_outcome(s->dir_fd, &s->spec, &(JobOutcome) {
                .status = timed_out ? JOB_TIMED_OUT : killed ? JOB_KILLED : JOB_EXITED,
                .exit_code = si.si_code == CLD_EXITED ? si.si_status : -1,
                .signal = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED ? si.si_status : 0,
                .executed = true,
                .run = &run,
                .dead = dead,
                .method = c->ops->teardown_method,
        });
        if (r < 0)
                return r;

        if (dead)
                c->ops->cleanup(c);
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
                .dir_fd = -EBADF, .output_fd = -EBADF, .child = PIDREF_NULL,
                .containment = PAYLOAD_CONTAINMENT_NULL,
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
