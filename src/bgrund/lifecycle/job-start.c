/* SPDX-License-Identifier: MIT */
/* A job's start: each mechanism of config.mechanisms in turn until one
 * contains it, its supervisor held until then and let go once verified
 * inside; a failure falls back to the next mechanism while nothing can have
 * run, and is released once something may have. Its readiness hands it to
 * job_started() (job-end.c), which watches it run. */
#include <assert.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "containment.h"
#include "grant.h"
#include "job-log.h"
#include "job-end.h"
#include "job-network.h"
#include "job-private.h"
#include "job-store.h"
#include "job.h"
#include "launch-options.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "supervisor-process.h"
#include "supervisor-protocol.h"
#include "strv.h"
#include "time-util.h"

bool job_awaits_containment(const Job *j, Mechanism m) {
        return j->state == JOB_STATE_STARTING && j->live->spec.mechanism == m && j->live->start.spawned_pidfd >= 0;
}

/* --- its supervisor ---------------------------------------------------- */

/* From spawn to readiness: what the supervisor's setup may take at most. */
#define START_TIMEOUT_USEC (30 * USEC_PER_SEC)

/* How long a supervisor that refused its job may take to exit: it only
 * closes what it opened. */
#define REFUSED_EXIT_TIMEOUT_USEC (5 * USEC_PER_SEC)

/* Worded alike for every way of failing (missing, not reachable by the
 * job's user, swapped while the sandbox was made), as cwd's refusal is:
 * nothing tells the caller about a path its user cannot see. */
static const char *path_refusal(const JobSpec *spec, unsigned option, unsigned entry, char **message) {
        const char *fallback = "A sandbox path does not exist or is not reachable by the job's user";
        if (option >= _LAUNCH_OPTION_MAX || launch_options[option].type != LAUNCH_VALUE_PATHS)
                return fallback;
        char *const *paths = launch_option_get(option, spec).strv;
        if (!paths || entry >= strv_length(paths))
                return fallback;
        if (asprintf(message, "%s: '%.256s' does not exist or is not reachable by user %s (a leading '-' makes it optional)",
                     launch_options[option].name, paths[entry], spec->user) < 0)
                return *message = NULL, fallback;
        return *message;
}

static void refused_done(Job *j, bool exited) {
        j->live->start.ready_source = sd_event_source_disable_unref(j->live->start.ready_source);
        j->live->start.start_timer = sd_event_source_disable_unref(j->live->start.start_timer);
        if (!exited) {
                job_start_failed(j, false, "the supervisor that refused the job did not exit");
                return;
        }
        _cleanup_free_ char *message = NULL;
        if (j->live->start.refused_limits) /* EnforceLimits */
                return job_start_refused(j, BGRUN_ERROR(LIMIT_NOT_ENFORCED), job_limits_refusal(j->live->start.refused_limits, &message));
        const JobSpec *spec = &j->live->spec;
        if (j->live->start.refusal == SUPERVISOR_SANDBOX_REFUSED) {
                unsigned i = j->live->start.refused_option;
                if (asprintf(&message, "%s cannot be enforced here: %s; nothing ran",
                             i < _LAUNCH_OPTION_MAX ? launch_options[i].name : "A sandbox option",
                             j->live->start.refused_errno == EPERM ? "bgrund may not make namespaces (Operation not permitted)"
                             : j->live->start.refused_errno == EOPNOTSUPP
                                     ? "the kernel lacks Landlock's scoping (ABI 6, Linux 6.12), which keeps a sandbox's "
                                       "processes from signalling or reaching sockets outside it"
                                     : strerror(j->live->start.refused_errno)) < 0)
                        message = NULL;
                return job_start_refused(j, BGRUN_ERROR(SANDBOX_NOT_AVAILABLE), message ?: "A sandbox option cannot be enforced here; nothing ran");
        }
        if (j->live->start.refusal == SUPERVISOR_PATH_REFUSED)
                return job_start_refused(j, -EINVAL, path_refusal(spec, j->live->start.refused_option, j->live->start.refused_errno,
                                                                  &message));
        if (j->live->start.refusal == SUPERVISOR_DEADLINE_PASSED)
                return job_start_refused(j, BGRUN_ERROR(DEADLINE_PASSED),
                                         "LaunchDeadlineUSec passed before the command could be started; nothing ran");
        if (j->live->start.refusal == SUPERVISOR_PROGRAM_REFUSED && spec->argv) {
                /* The name as asked, at most 256 bytes of it: the caller's own. */
                if (asprintf(&message, "Argv: program '%.256s' is not found in the job's PATH or is not executable by user %s",
                             spec->argv[0], spec->user) < 0)
                        message = NULL;
                return job_start_refused(j, -EINVAL, message ?: "Argv: the program is not found in the job's PATH");
        }
        /* Worded as bgrund's own check of cwd was, for every way of failing. */
        if (asprintf(&message, "cwd '%s' does not exist or is not a directory that user %s can enter", spec->cwd,
                     spec->user) < 0)
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

/* The supervisor refused the job (SUPERVISOR_*_REFUSED): it ran nothing
 * and exits; the job goes once it is gone, so that nothing of it outlives
 * the Launch's answer. */
static void await_refusing_supervisor(Job *j) {
        Runtime *rt = j->runtime;
        _cleanup_close_ int fd = fcntl(j->live->start.spawned_pidfd, F_DUPFD_CLOEXEC, 3);
        int r = fd < 0 ? negative_errno()
                       : sd_event_add_io(rt->event, &j->live->start.ready_source, fd, EPOLLIN, on_refused_exit, j);
        if (r >= 0) {
                (void) sd_event_source_set_io_fd_own(j->live->start.ready_source, true);
                TAKE_FD(fd);
                r = sd_event_add_time_relative(rt->event, &j->live->start.start_timer, CLOCK_MONOTONIC,
                                               REFUSED_EXIT_TIMEOUT_USEC, 0, on_refused_timeout, j);
        }
        if (r < 0) {
                log_warning_errno(r, "Job %s: cannot wait for its refusing supervisor: %m", j->id);
                refused_done(j, false);
        }
}

/* n: what a read of the readiness pipe gave, c the bytes (one write). */
static void ready_done(Job *j, ssize_t n, const char c[static 3]) {
        j->live->start.ready_source = sd_event_source_disable_unref(j->live->start.ready_source);
        j->live->start.start_timer = sd_event_source_disable_unref(j->live->start.start_timer);
        j->live->start.go_fd = safe_close(j->live->start.go_fd);
        if (n == 2 && c[0] == SUPERVISOR_LIMITS_REFUSED) {
                j->live->start.refused_limits = (unsigned char) c[1] ?: ~0U;
                await_refusing_supervisor(j);
        } else if (n == 1 && (c[0] == SUPERVISOR_CWD_REFUSED || c[0] == SUPERVISOR_PROGRAM_REFUSED ||
                              c[0] == SUPERVISOR_DEADLINE_PASSED)) {
                j->live->start.refusal = c[0];
                await_refusing_supervisor(j);
        } else if (n == 3 && (c[0] == SUPERVISOR_SANDBOX_REFUSED || c[0] == SUPERVISOR_PATH_REFUSED)) {
                j->live->start.refusal = c[0];
                j->live->start.refused_option = (unsigned char) c[1];
                j->live->start.refused_errno = (unsigned char) c[2];
                await_refusing_supervisor(j);
        }
        else if (n == 1)
                job_started(j);
        else
                job_start_failed(j, true, "the supervisor exited before the command ran");
}

static int on_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char c[3] = {};
        ssize_t n = read(fd, c, sizeof c);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        ready_done(userdata, n, c);
        return 0;
}

static int on_start_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        /* Readiness that came in the same turn of the loop still counts. */
        char c[3] = {};
        ssize_t n = read(sd_event_source_get_io_fd(j->live->start.ready_source), c, sizeof c);
        if (n >= 0) {
                ready_done(j, n, c);
                return 0;
        }
        j->live->start.start_timer = sd_event_source_disable_unref(j->live->start.start_timer);
        job_start_failed(j, true, "the supervisor did not report readiness in time");
        return 0;
}

/* Spawn j's supervisor, held, as plan says (one of the pool where it can);
 * its pid in j->live->start.spawned_pid, its readiness watched. */
static int supervisor_spawn(Job *j, const SpawnPlan *plan) {
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

        r = sd_event_add_io(rt->event, &j->live->start.ready_source, ready_read, EPOLLIN, on_ready, j);
        if (r >= 0) {
                (void) sd_event_source_set_io_fd_own(j->live->start.ready_source, true);
                TAKE_FD(ready_read);
                r = sd_event_add_time_relative(rt->event, &j->live->start.start_timer, CLOCK_MONOTONIC, START_TIMEOUT_USEC,
                                               0, on_start_timeout, j);
        }
        if (r < 0) {
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                j->live->start.ready_source = sd_event_source_disable_unref(j->live->start.ready_source);
                return r;
        }
        j->live->start.spawned_pidfd = TAKE_FD(pidfd);
        j->live->start.go_fd = TAKE_FD(go_write);
        j->live->start.spawned_pid = pid;
        return 0;
}

/* Let the held supervisor go on: its containment is ready. From here on the
 * command may run, so a failure never falls back to another mechanism. */
static int supervisor_let_go(Job *j) {
        if (j->live->start.go_fd < 0)
                return -EBADF;
        /* From the next byte on it may run: never queued again after a crash. */
        if (j->answered_queued) {
                int r = job_store_unmark_queued(j->live->dir_fd);
                if (r < 0)
                        return r;
        }
        /* A failed write means the supervisor is gone and never read the
         * byte: it ran nothing, so another mechanism may still try. */
        ssize_t n = write(j->live->start.go_fd, "G", 1);
        int r = n == 1 ? 0 : n < 0 ? negative_errno() : -EIO;
        if (r >= 0)
                job_set_state(j, JOB_STATE_LET_GO);
        j->live->start.go_fd = safe_close(j->live->start.go_fd);
        return r;
}

/* Kill a held supervisor that will never be let go (through its pidfd) and
 * stop listening to it, before anything else starts the job. */
static void supervisor_abort(Job *j) {
        /* Killed before its go pipe closes, so one still held runs nothing;
         * one already let go may have started the command, and its caller
         * releases the containment (job_start_failed). */
        if (j->live->start.spawned_pidfd >= 0)
                (void) pidfd_send_signal(j->live->start.spawned_pidfd, SIGKILL, NULL, 0);
        job_start_release(&j->live->start);
}

/* --- its start ---------------------------------------------------------- */

/* Never started, nothing ran: it goes as if it never existed. error says
 * why: BGRUN_ERROR(START_FAILED) (no mechanism could contain it), -EINVAL (the
 * mechanism refused what it was asked), or another -errno. */
static void job_discard(Job *j, int error, const char *message) {
        Runtime *rt = j->runtime;
        assert(j->state == JOB_STATE_STARTING);
        /* Answered queued, it exists for everyone: it ends failed, saying why. */
        if (j->answered_queued)
                return job_end_unstarted(j, JOB_FAILED, error, message);
        runtime_remove_job(rt, j);
        (void) job_store_remove(rt->jobs_fd, j->id);
        runtime_notify_running_jobs(rt);
        if (error == BGRUN_ERROR(START_FAILED))
                job_log_refused(j, error, message);
        if (rt->notifier)
                rt->notifier->job_discarded(rt->notifier_data, j, error, message);
        job_free(j);
}

/* j as its mechanism sees it. */
static ContainmentJob job_for_containment(const Job *j) {
        return (ContainmentJob) { .id = j->id, .spec = &j->live->spec };
}

/* Verify the held supervisor is inside its containment and let it go. */
static int job_let_go(Job *j) {
        const JobSpec *spec = &j->live->spec;
        if (spec->launch_deadline_usec > 0 && now_realtime_usec() >= spec->launch_deadline_usec)
                return BGRUN_ERROR(DEADLINE_PASSED); /* held, it ran nothing */
        Containment *c = job_containment(j);
        ContainmentJob cj = job_for_containment(j);
        int r = containment_verify(c, &cj, j->live->start.spawned_pid);
        if (r == 0)
                r = -EREMCHG;
        if (r < 0)
                return r;
        return supervisor_let_go(j);
}

void job_containment_ready(Job *j) {
        assert(job_awaits_containment(j, j->live->spec.mechanism));
        int r = job_let_go(j);
        if (r == BGRUN_ERROR(DEADLINE_PASSED)) {
                /* Held, it ran nothing: the Launch fails, as if it never was. */
                supervisor_abort(j);
                job_discard(j, r, "LaunchDeadlineUSec passed before the command could be started; nothing ran");
                return;
        }
        if (r < 0) {
                char msg[256];
                snprintf(msg, sizeof msg, "the supervisor could not be let go once its containment was ready: %s",
                         strerror(-r));
                job_start_failed(j, true, msg);
        }
}

/* Move the spec to mechanism c and open the grant, before anything of the
 * job can run under it. */
static int job_assign_mechanism(Job *j, Containment *c) {
        JobSpec *spec = &j->live->spec;
        _cleanup_free_ char *unit = NULL, *cgroup = NULL;
        int r = containment_describe(c, spec, &unit, &cgroup);
        if (r < 0)
                return r;
        /* Only a fallback changes the spec written at Launch. */
        if (spec->mechanism != c->ops->mechanism || !spec->unit || !streq(spec->unit, unit)) {
                spec->mechanism = c->ops->mechanism;
                free(spec->unit);
                spec->unit = TAKE_PTR(unit);
                r = job_store_write_spec(j->live->dir_fd, spec);
                if (r < 0)
                        return r;
        }
        return grant_open(j->live->dir_fd, c->ops->mechanism, spec->unit, cgroup, spec->owner);
}

/* Start j under c. *ret_fatal says a failure is not the mechanism's (no
 * space for the record, no process for the supervisor): another mechanism
 * would fail the same way, so the launch fails instead of falling back. */
static int job_start_with(Job *j, Containment *c, bool *ret_fatal) {
        _cleanup_(spawn_plan_done) SpawnPlan plan = SPAWN_PLAN_NULL;
        int r = job_assign_mechanism(j, c);
        *ret_fatal = true;
        if (r < 0)
                return r;
        ContainmentJob cj = job_for_containment(j);
        r = containment_prepare(c, &cj, &plan);
        *ret_fatal = false;
        if (r < 0)
                return r;
        r = supervisor_spawn(j, &plan);
        *ret_fatal = true;
        if (r < 0) {
                if (plan.pin)
                        supervisor_unpin(j->runtime, j->id);
                return r;
        }
        *ret_fatal = false;
        r = containment_start(c, &cj, j->live->start.spawned_pid);
        if (r > 0)
                r = job_let_go(j);
        if (r < 0) {
                supervisor_abort(j);
                if (plan.pin)
                        supervisor_unpin(j->runtime, j->id);
        }
        if (r == BGRUN_ERROR(DEADLINE_PASSED))
                *ret_fatal = true; /* another mechanism would be later still */
        return r;
}

int job_start(Job *j, unsigned from) {
        Runtime *rt = j->runtime;
        assert(j->state == JOB_STATE_STARTING);

        /* Without the members named it makes a namespace of its own: a
         * network apart, never a looser one. */
        int k = job_network_prepare(j);
        if (k < 0)
                log_warning_errno(k, "Job %s: cannot name its session's network: %m", j->id);

        for (unsigned i = from; i < rt->config.n_mechanisms; i++) {
                Containment *c = runtime_containment(rt, rt->config.mechanisms[i]);
                if (!containment_usable(c))
                        continue;
                j->live->start.next_mechanism = i + 1;
                bool fatal;
                int r = job_start_with(j, c, &fatal);
                if (r >= 0)
                        return 0;
                log_warning_errno(r, "Job %s: mechanism %s failed to start: %m", j->id,
                                  mechanism_to_string(c->ops->mechanism));
                if (fatal)
                        return r;
        }
        return BGRUN_ERROR(START_FAILED);
}

void job_start_refused(Job *j, int error, const char *message) {
        assert(j->state == JOB_STATE_LET_GO);
        Containment *c = job_containment(j);
        _cleanup_free_ char *unit = NULL, *cgroup = NULL;
        _cleanup_close_ int handle = -EBADF;
        /* The supervisor's word that nothing ran is checked where the
         * mechanism can: whatever is found is killed and the job released. */
        int r = c->ops->describe(c, &j->live->spec, &unit, &cgroup);
        if (r >= 0)
                r = c->ops->kill(c, j->id, cgroup, NULL, &handle);
        r = r == -ENOENT ? 1 : r < 0 ? r : c->ops->is_empty(c, NULL, handle);
        if (r == 0 || !cgroup) {
                job_start_failed(j, false, "its supervisor refused it, but something of it is still running");
                return;
        }
        if (c->ops->cleanup)
                c->ops->cleanup(c, cgroup, true);
        supervisor_abort(j);
        job_set_state(j, JOB_STATE_STARTING); /* it ran nothing, and is gone */
        job_discard(j, error, message);
}

void job_start_failed(Job *j, bool may_fall_back, const char *message) {
        JobResult res = {};
        assert(job_is_starting(j));

        /* Nothing of the failed attempt may go on: no supervisor of it. (A
         * late answer about it finds the job moved on.) */
        supervisor_abort(j);

        /* A supervisor that failed its own setup published a result: the job
         * exists and is failed, nothing of the command ran. */
        if (job_store_read_result(j->live->dir_fd, &res) >= 0) {
                job_end_with_result(j, &res);
                return;
        }

        log_warning("Job %s: %s", j->id, message);

        /* If the command may have been exec'd (run.json exists, or the
         * supervisor was let go and died before saying) it must never run a
         * second time through another mechanism: release whatever is left of
         * it and record the job as failed. */
        bool ran = job_read_run(j) >= 0;
        if (ran || j->state == JOB_STATE_LET_GO) {
                job_set_state(j, JOB_STATE_RUNNING);
                job_announce(j);
                job_release(j); /* its end is told when confirmed */
                return;
        }

        int r = may_fall_back ? job_start(j, j->live->start.next_mechanism) : -EINVAL;
        if (r >= 0)
                return;
        job_discard(j, r, message);
}
