/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's loop: start the command inside its containment, wait for
 * its end, tear down, publish. Which containment, and how it kills and
 * confirms, is the table's business (payload-containment.h); nothing here
 * asks which mechanism runs the job.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "command-start.h"
#include "git-cleanup.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "publish.h"
#include "subreaper.h"
#include "supervise.h"
#include "supervisor-protocol.h"
#include "time-util.h"

void supervisor_done(Supervisor *s) {
        safe_close(s->dir_fd);
        safe_close(s->ready_fd);
        input_control_done(&s->input);
        socket_mediator_done(&s->sockets);
        proxy_process_done(&s->proxy);
        output_relay_done(&s->output);
        job_spec_done(&s->spec);
        payload_containment_done(&s->containment);
        pidref_done(&s->child);
        safe_close(s->teardown_lock_fd);
}

static int fail_setup(Supervisor *s, int error, const char *step) {
        return publish_setup_failure(s->dir_fd, &s->spec, error, step);
}

/* After the teardown: the rest of the output (a terminal's too), its final
 * form, and how much of it there was for the result. */
static void finish_output(Supervisor *s, JobOutcome *o) {
        /* What the terminal showed last, through the output pipe: pumped
         * meanwhile, so a full pipe does not stop it; bounded, since the
         * job is dead and the master holds a few KiB at most. */
        for (unsigned i = 0; i < 1024 && !input_control_drain_output(&s->input); i++)
                (void) output_relay_pump(&s->output, UINT64_MAX);
        input_control_done(&s->input);
        output_relay_finish(&s->output);
        output_relay_summary(&s->output, &o->output_bytes, &o->output_dropped_bytes);
        o->output_known = true;
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
        _cleanup_free_ char *controllers = NULL;
        (void) s->containment.ops->controllers(&s->containment, &controllers);
        run->limits_unenforced = job_limits_unenforced(&s->spec, controllers);
        int r = process_start_token(getpid(), -EBADF, run->supervisor_token, sizeof run->supervisor_token);
        if (r < 0)
                return r;
        return job_store_write_run(s->dir_fd, run);
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

/* Relay this much output at most between two looks at the signals and the
 * timer: a job that writes without pause delays a Kill by a few ms only. */
#define RELAY_BUDGET (UINT64_C(8) << 20)

static void relay_output(Supervisor *s) {
        int r = output_relay_pump(&s->output, RELAY_BUDGET);
        if (r < 0) {
                /* The pipe itself failed (a failing output file only drops
                 * the output): stop looking at it rather than spin. */
                log_error_errno(r, "Job %s: cannot read its output: %m", s->spec.id);
                s->output.eof = true;
        }
}

/* The owner's disk budget: bgrund's word to the relay, the relay's to
 * bgrund (supervisor-protocol.h). */
static void exchange_disk_budget(Supervisor *s) {
        if (s->input.disk_limit_new) {
                s->input.disk_limit_new = false;
                output_relay_set_disk_limit(&s->output, s->input.disk_limit);
        }
        if (s->output.disk_report_due || s->input.disk_report_due) {
                input_control_send_disk_used(&s->input, output_relay_disk_used(&s->output));
                s->input.disk_report_due = false;
                output_relay_disk_reported(&s->output);
        }
}

/* The shell is gone, but its output waits in the pipe for room bgrund is
 * asked for: the end waits for the answer (the relay waits no longer than
 * DISK_WAIT_USEC), since after it nobody can answer and the rest would be
 * dropped though the owner has room for it. Not without bgrund there. */
static bool output_waits_for_budget(const Supervisor *s) {
        return s->input.conn_fd >= 0 && output_relay_awaits_budget(&s->output);
}

/* How the job is being ended, once something asked. The first of a Kill,
 * a Stop and the wall-clock limit decides the status; a Kill during a
 * stop's grace only makes it immediate. */
typedef struct Ending {
        JobStatus status;  /* JOB_EXITED until something asked */
        bool graceful;     /* a stop's signal went out: its grace runs */
        bool forced;       /* everything of the job was SIGKILLed */
        int grace_fd;      /* the grace's timer */
} Ending;

/* How the job ends is ours to decide from here: the teardown slot's lock,
 * held until we exit, so bgrund never kills it behind our back. If bgrund
 * killed it meanwhile (its Kill, with its lock), the slot says how, and
 * that is the job's end: true then. */
static bool decide_end(Supervisor *s) {
        if (s->teardown_lock_fd < 0) {
                int r = job_teardown_lock(s->dir_fd, true, &s->teardown_lock_fd);
                if (r < 0 && r != -ENOENT) /* -ENOENT: a job from before slots */
                        log_warning_errno(r, "Job %s: cannot lock its teardown slot: %m", s->spec.id);
                if (r >= 0 && job_teardown_read(s->dir_fd, &s->given) >= 0)
                        s->teardown_given = true;
        }
        return s->teardown_given;
}

/* The contract's rule for the race of a job that exits as it is ended: it
 * is ended from outside only if something of it was still there. */
static bool nothing_left(Supervisor *s) {
        return s->containment.ops->is_empty(&s->containment) > 0;
}

/* bgrund ended the job: nothing is left to kill or wait for but the
 * shell's exit. */
static void end_as_given(Supervisor *s, Ending *e) {
        e->status = s->given.status;
        e->grace_fd = safe_close(e->grace_fd);
        e->forced = true;
}

static void end_now(Supervisor *s, Ending *e, JobStatus status) {
        if (e->status == JOB_EXITED) {
                if (nothing_left(s))
                        return; /* its shell's exit is on its way */
                e->status = status;
        }
        e->grace_fd = safe_close(e->grace_fd);
        if (!e->forced) {
                s->containment.ops->kill(&s->containment, &s->child);
                e->forced = true;
        }
}

/* A stop's way (Stop, and the wall-clock limit): sig to every process of
 * the job, grace_usec for all of them to exit, then everything is killed.
 * A grace of 0 kills at once. */
static void end_gracefully(Supervisor *s, Ending *e, JobStatus status, int sig, uint64_t grace_usec) {
        if (e->status != JOB_EXITED)
                return; /* under way already */
        if (sig < 1 || sig > SIGRTMAX)
                sig = s->spec.stop_signal;
        if (grace_usec == 0)
                return end_now(s, e, status);
        if (nothing_left(s))
                return;
        e->status = status;
        e->grace_fd = make_timerfd(grace_usec);
        if (e->grace_fd < 0) {
                log_warning_errno(e->grace_fd, "Job %s: no timer for its grace, killing it now: %m", s->spec.id);
                return end_now(s, e, status);
        }
        e->graceful = true;
        s->containment.ops->signal(&s->containment, &s->child, sig);
}

/* The signals bgrund sends (supervisor-protocol.h), and orphans to reap. */
static void read_signals(Supervisor *s, Ending *e, int sig_fd, bool shell_done) {
        struct signalfd_siginfo ssi;
        while (read(sig_fd, &ssi, sizeof ssi) == sizeof ssi) {
                if (ssi.ssi_signo == SIGCHLD)
                        continue;
                if (decide_end(s))
                        end_as_given(s, e);
                else if (ssi.ssi_signo == SUPERVISOR_STOP_SIGNAL) {
                        int sig = s->spec.stop_signal;
                        uint64_t grace = s->spec.stop_grace_usec;
                        /* bgrund's request carries its own signal and grace. */
                        if (ssi.ssi_code == SI_QUEUE)
                                stop_request_unpack(ssi.ssi_ptr, &sig, &grace);
                        end_gracefully(s, e, JOB_KILLED, sig, grace);
                } else
                        end_now(s, e, JOB_KILLED);
        }
        subreaper_reap_orphans(shell_done ? 0 : s->child.pid);
}

/* A job that lives this long gets its teardown slot's block: a job of a
 * few ms never pays the fdatasync, one killed later answers sooner. */
#define PREPARE_SLOT_USEC (10 * USEC_PER_MSEC)

static void prepare_slot(Supervisor *s, uint64_t started) {
        if (s->teardown_prepared || now_monotonic_usec() < started + PREPARE_SLOT_USEC)
                return;
        /* Tried once: -EAGAIN is bgrund ending the job, which needs no
         * block any more; a slot without one is still written, a little
         * slower. */
        int r = job_teardown_prepare(s->dir_fd);
        if (r < 0 && r != -EAGAIN)
                log_debug_errno(r, "Job %s: cannot prepare its teardown slot: %m", s->spec.id);
        s->teardown_prepared = true;
}

/* How often to look whether a stopped job's processes are gone where
 * nothing tells (the process tree), and at most between two looks where
 * something does (cgroup.events notifications are rate-limited). */
#define EMPTY_POLL_USEC (20 * USEC_PER_MSEC)

/* Until the shell exits (and, during a stop's grace, until nothing of the
 * job is left or the grace is over), relaying its output meanwhile.
 * *ret_by_signal: the stop's signal alone ended every process. */
static JobStatus wait_for_end(Supervisor *s, int sig_fd, siginfo_t *ret, bool *ret_by_signal) {
        PayloadContainment *c = &s->containment;

        _cleanup_close_ int timer_fd = -EBADF;
        if (s->spec.max_runtime_usec > 0) {
                timer_fd = make_timerfd(s->spec.max_runtime_usec);
                if (timer_fd < 0)
                        log_warning_errno(timer_fd, "No wall-clock limit: timerfd failed: %m");
        }

        Ending e = { .status = JOB_EXITED, .grace_fd = -EBADF };
        uint64_t started = now_monotonic_usec();
        _cleanup_close_ int empty_fd = -EBADF;
        bool shell_done = false, empty_unwatched = false;
        *ret_by_signal = false;
        for (;;) {
                if (shell_done && !output_waits_for_budget(s)) {
                        if (!e.graceful || e.forced)
                                break;
                        /* The shell went within the grace; the rest of the job
                         * must too for the signal to have ended it. */
                        if (empty_fd < 0 && !empty_unwatched && c->ops->watch(c, &empty_fd) < 0)
                                empty_unwatched = true;
                        int r = c->ops->is_empty(c);
                        if (r > 0) {
                                *ret_by_signal = true;
                                break;
                        }
                        if (r < 0) {
                                end_now(s, &e, e.status);
                                break;
                        }
                }
                uint64_t hold = output_relay_hold_usec(&s->output);
                if (shell_done)
                        hold = hold > 0 ? MIN(hold, EMPTY_POLL_USEC) : EMPTY_POLL_USEC;
                if (!s->teardown_prepared && e.status == JOB_EXITED) {
                        uint64_t now = now_monotonic_usec(), due = started + PREPARE_SLOT_USEC;
                        uint64_t left = due > now ? due - now : 1;
                        hold = hold > 0 ? MIN(hold, left) : left;
                }
                uint64_t denied = proxy_process_hold_usec(&s->proxy);
                if (denied > 0)
                        hold = hold > 0 ? MIN(hold, denied) : denied;
                struct pollfd p[6 + INPUT_CONTROL_POLLS + SOCKET_MEDIATOR_POLLS + PROXY_PROCESS_POLLS] = {
                        { .fd = shell_done ? -EBADF : s->child.fd, .events = POLLIN },
                        { .fd = sig_fd, .events = POLLIN },
                        { .fd = timer_fd, .events = POLLIN },
                        { .fd = s->output.eof || output_relay_hold_usec(&s->output) > 0 ? -EBADF : s->output.pipe_fd,
                          .events = POLLIN },
                        { .fd = e.grace_fd, .events = POLLIN },
                        { .fd = empty_fd, .events = CGROUP_EVENTS_WATCH_EVENTS },
                };
                input_control_poll(&s->input, p + 6);
                socket_mediator_poll(&s->sockets, p + 6 + INPUT_CONTROL_POLLS);
                proxy_process_poll(&s->proxy, p + 6 + INPUT_CONTROL_POLLS + SOCKET_MEDIATOR_POLLS);
                struct timespec ts = { .tv_sec = (time_t) (hold / USEC_PER_SEC),
                                       .tv_nsec = (long) (hold % USEC_PER_SEC * 1000) };
                if (ppoll(p, ELEMENTSOF(p), hold > 0 ? &ts : NULL, NULL) < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error_errno(negative_errno(), "poll failed: %m");
                        end_now(s, &e, JOB_KILLED);
                        break; /* to the teardown, which reaps what is left */
                }
                if (e.status == JOB_EXITED && !shell_done)
                        prepare_slot(s, started);
                if (p[1].revents)
                        read_signals(s, &e, sig_fd, shell_done);
                if (p[2].revents) {
                        uint64_t ticks;
                        (void) !read(timer_fd, &ticks, sizeof ticks);
                        timer_fd = safe_close(timer_fd);
                        if (decide_end(s))
                                end_as_given(s, &e);
                        else
                                end_gracefully(s, &e, JOB_TIMED_OUT, s->spec.stop_signal, s->spec.stop_grace_usec);
                }
                input_control_dispatch(&s->input, p + 6);
                socket_mediator_dispatch(&s->sockets, p + 6 + INPUT_CONTROL_POLLS);
                proxy_process_dispatch(&s->proxy, p + 6 + INPUT_CONTROL_POLLS + SOCKET_MEDIATOR_POLLS, s->dir_fd);
                if (p[3].revents)
                        relay_output(s);
                exchange_disk_budget(s);
                if (p[4].revents)
                        end_now(s, &e, e.status); /* the grace is over */
                if (p[5].revents)
                        (void) cgroup_events_watch_populated(empty_fd); /* re-armed; is_empty() looks */
                if (p[0].revents) {
                        if (waitid(P_PIDFD, (id_t) s->child.fd, ret, WEXITED) == 0)
                                shell_done = true;
                        else if (errno != EINTR && errno != EAGAIN) {
                                log_error_errno(negative_errno(), "waitid failed: %m");
                                shell_done = true;
                        }
                        if (shell_done) {
                                /* What the pipe holds now: relayed, or
                                 * waiting for room (output_waits_for_budget()). */
                                relay_output(s);
                                exchange_disk_budget(s);
                        }
                }
        }
        safe_close(e.grace_fd);
        return e.status;
}

int supervise(Supervisor *s) {
        PayloadContainment *c = &s->containment;
        const char *step;
        int r;

        /* SIGTERM is bgrund's Kill (SIGINT and SIGHUP count the same),
         * SIGUSR1 its Stop; SIGCHLD tells of orphans to reap. Read from a
         * signalfd, so the loop never runs a handler. */
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SUPERVISOR_KILL_SIGNAL);
        sigaddset(&mask, SUPERVISOR_STOP_SIGNAL);
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

        r = payload_containment_init(c, s->spec.mechanism);
        if (r < 0)
                return fail_setup(s, r, "choose the job's containment");
        r = c->ops->setup(c, s->dir_fd, &step);
        if (r < 0)
                return fail_setup(s, r, step);

        r = command_start(s);
        if (r < 0)
                return r;

        _cleanup_(job_run_done) JobRun run = {};
        r = record_run(s, &run);
        if (r < 0) {
                /* A job that cannot be recorded as running must not run. */
                c->ops->kill(c, &s->child);
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                bool dead = c->ops->confirm_empty(c) == 0;
                JobOutcome o = {
                        .status = JOB_FAILED,
                        .exit_code = 1,
                        .executed = true,
                        .run = NULL, /* as readers of the record see it */
                        .dead = dead,
                        .method = c->ops->teardown_method,
                        .reason = "cannot record the running job",
                };
                finish_output(s, &o);
                (void) publish_outcome(s->dir_fd, &s->spec, &o);
                return log_error_errno(r, "Failed to record the running job: %m");
        }

        if (s->ready_fd >= 0) {
                (void) !write(s->ready_fd, &(char) { SUPERVISOR_READY }, 1);
                s->ready_fd = safe_close(s->ready_fd);
        }

        siginfo_t si = {};
        bool by_signal;
        JobStatus status = wait_for_end(s, sig_fd, &si, &by_signal);

        /* The shell is gone; whatever it left behind goes with it. If bgrund
         * killed it (its Kill, answered already), the slot says how, and
         * that is never contradicted. */
        bool given = decide_end(s);
        bool dead = c->ops->confirm_empty(c) == 0;
        uint64_t confirmed_at = dead ? now_realtime_usec() : 0;
        TeardownMethod method = by_signal && dead ? TEARDOWN_SIGNAL : c->ops->teardown_method;
        if (given) {
                status = s->given.status;
                dead = s->given.dead;
                method = s->given.method;
                confirmed_at = s->given.confirmed_at;
        } else if (status != JOB_EXITED && c->ops->answers_at_confirmation)
                /* An end from outside is final from here: said durably,
                 * then to bgrund, which answers on it while the rest is
                 * gathered. */
                publish_teardown(s->dir_fd, &s->input, &(JobTeardown) {
                        .status = status, .dead = dead, .method = method, .confirmed_at = confirmed_at });
        input_control_stop_listening(&s->input);
        /* Nothing of the job is left to ask it: the proxy goes, and what it
         * refused is final before the result is. */
        proxy_process_stop(&s->proxy, s->dir_fd);
        subreaper_reap_orphans(0);
        JobUsage usage;
        c->ops->usage(c, &usage);

        JobOutcome o = {
                .usage = usage,
                .status = status,
                .exit_code = si.si_code == CLD_EXITED ? si.si_status : -1,
                .signal = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED ? si.si_status : 0,
                .executed = true,
                .run = &run,
                .dead = dead,
                .method = method,
                .confirmed_at = confirmed_at,
        };
        finish_output(s, &o);
        r = publish_outcome(s->dir_fd, &s->spec, &o);
        if (r < 0)
                return r;
        /* Nothing of the job can race it now: what ProtectGit left goes. */
        if (dead) {
                (void) git_cleanup(s->dir_fd, &s->spec);
                c->ops->cleanup(c);
        }
        return 0;
}
