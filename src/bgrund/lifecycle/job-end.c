/* SPDX-License-Identifier: MIT */
/* A job's end: running under its verified supervisor, which a Kill or Stop
 * is told to (or job-kill.c's own cgroup.kill), the end its supervisor
 * publishes, and the release of a job whose supervisor is lost or cannot be
 * verified: bgrund kills its containment itself, confirms it empty
 * (asynchronously where the mechanism can tell, else by asking again) and
 * records the job as failed, or killed if a Kill asked. Then job_end(). */

#include <assert.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "cgroup.h"
#include "containment.h"
#include "job-kill.h"
#include "job-end.h"
#include "job-input.h"
#include "job-log.h"
#include "job-private.h"
#include "job-store.h"
#include "job-teardown.h"
#include "job.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "git-placeholders.h"
#include "supervisor-process.h"
#include "supervisor-protocol.h"
#include "time-util.h"

/* --- the end ----------------------------------------------------------- */

/* res: the job's final result, taken over (its record then fills the cache
 * from memory, for the notifications below). Every end has one: the
 * supervisor's, or the one a release wrote. */
void job_end(Job *j, JobStatus status, JobResult *res) {
        Runtime *rt = j->runtime;
        assert(j->live);
        assert(res);
        assert(status != JOB_RUNNING);
        job_log_ended(j, status, res);

        /* What is left of a containment nobody else collects: the one its
         * grant names, which a changed configuration may no longer describe
         * (nor, if its mechanism is no longer initialized, describe at all). */
        if (res->dead && res->method != TEARDOWN_NEVER_STARTED) /* none was made for a job taken out of its queue */
                containment_cleanup(job_containment(j), j->live->dir_fd, &j->live->spec, j->state == JOB_STATE_RELEASING);
        /* What ProtectGit left in the user's tree, where its supervisor did
         * not get to it (it died): removed now nothing of the job is left. */
        if (res->dead && git_placeholders_pending(j->live->dir_fd)) {
                int r = supervisor_spawn_cleanup(rt, j->id);
                if (r < 0)
                        log_warning_errno(r, "Job %s: cannot remove its placeholders: %m", j->id);
        }

        uint64_t disk_size;
        if (job_store_disk_size(j->live->dir_fd, &disk_size) >= 0)
                runtime_job_charge(rt, j, disk_size);
        RecordCache *cache = &rt->cache;
        runtime_cache_drop(rt, NULL);
        cache->spec = TAKE_STRUCT(j->live->spec);
        cache->have_run = j->live->run != NULL;
        if (j->live->run)
                cache->run = TAKE_STRUCT(*j->live->run);
        cache->result = *res;
        runtime_cache_read_files(cache, j->live->dir_fd);
        strcpy(cache->id, j->id);
        /* Ended while its live part still says what it counted as; then
         * only the struct stays. */
        job_set_ended(j, status, res);
        if (rt->notifier)
                rt->notifier->job_ended(rt->notifier_data, j);
        log_debug("Job %s ended: %s", j->id, job_status_to_string(status));
        /* Jobs it launched end with it when it was ended from outside, not
         * when it exited on its own: it may have started a server. */
        if (status == JOB_KILLED || status == JOB_TIMED_OUT)
                for (Job *child = j->children; child; child = child->sibling_next)
                        if (!job_is_ended(child))
                                job_kill(child);
        /* Last: it may forget other ended jobs of the owner. */
        runtime_apply_limits(rt, j);
}

/* The job's supervisor published its result and exited (or died after
 * publishing): settle the grant and end. */
void job_end_with_result(Job *j, JobResult *res) {
        int r = job_store_settle_grant(j->live->dir_fd, res);
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot release its grant: %m", j->id);
        job_end(j, res->status, res);
}

/* The name of the error that ended a job before it ran, as the contract's
 * record has it ("failure"): the D-Bus error's last word. */
static const char *failure_name(int error) {
        const BgrunErrorInfo *i = bgrun_error_info(bgrun_error_code(error));
        return i ? i->word : error == -EINVAL ? "InvalidArgs" : "Failed";
}

void job_end_unstarted(Job *j, JobStatus status, int error, const char *message) {
        assert(j->live && (job_is_queued(j) || j->state == JOB_STATE_STARTING));
        uint64_t now = now_realtime_usec();
        JobResult res = {
                .status = status,
                .exit_code = -1,
                .finished_at = now,
                .dead = true,
                .method = status == JOB_KILLED ? TEARDOWN_NEVER_STARTED : TEARDOWN_NOT_STARTED,
                .confirmed_at = now,
        };
        if (status == JOB_KILLED)
                snprintf(res.reason, sizeof res.reason, "taken out of its queue before it started; nothing ran");
        else {
                snprintf(res.failure, sizeof res.failure, "%s", failure_name(error));
                snprintf(res.reason, sizeof res.reason, "%s; nothing ran", message ?: strerror(-error));
        }
        int r = job_store_finish(j->live->dir_fd, &res);
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot write its result: %m", j->id);
        /* One sync a job, not two (a KillSession of a whole queue). */
        job_store_unmark_queued_ended(j->live->dir_fd);
        job_end(j, status, &res);
}

/* --- running ----------------------------------------------------------- */

static int on_supervisor_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        JobResult res = {};

        j->live->supervisor_source = sd_event_source_disable_unref(j->live->supervisor_source);
        int r = job_store_read_result(j->live->dir_fd, &res);
        if (r >= 0)
                job_end_with_result(j, &res);
        else {
                log_warning_errno(r, "Job %s: supervisor exited without a result: %m", j->id);
                job_release(j);
        }
        return 0;
}

int job_watch_supervisor(Job *j) {
        int r = sd_event_add_io(j->runtime->event, &j->live->supervisor_source, j->live->supervisor.fd, EPOLLIN,
                                on_supervisor_exit, j);
        if (r < 0)
                return r;
        /* Its disk budget, and its input later, come that way. */
        r = job_control_connect(j);
        if (r < 0 && r != -EAGAIN)
                log_debug_errno(r, "Job %s: no control connection to its supervisor yet: %m", j->id);
        return 0;
}

/* A Kill of a job in a cgroup: bgrund kills its payload itself and answers
 * at the confirmation (job-kill.c), unless its supervisor decided the end
 * already. Else the supervisor does the teardown (a stop's signal and
 * grace, cgroup.kill, confirm empty), says it in the teardown slot and on
 * the control socket ('T'), and its exit tells the rest. The signal goes
 * through the pidfd that was verified against the supervisor's start
 * token; the watchdog covers one that does not answer. */
static void job_tell_supervisor(Job *j) {
        JobLive *l = j->live;
        assert(job_is_supervised(j));
        int r;
        uint64_t patience = JOB_SUPERVISOR_PATIENCE_USEC;
        /* Escalation is one way: a stop once, then a kill (and a kill again). */
        bool kill_told = j->state >= JOB_STATE_KILLING;
        if (l->request == JOB_REQUEST_STOP && !kill_told) {
                siginfo_t info = {
                        .si_signo = SUPERVISOR_STOP_SIGNAL,
                        .si_code = SI_QUEUE,
                        .si_pid = getpid(),
                        .si_uid = getuid(),
                        .si_value.sival_ptr = (void *) (uintptr_t) stop_request_pack(l->stop_signal, l->stop_grace_usec),
                };
                r = pidfd_send_signal(l->supervisor.fd, SUPERVISOR_STOP_SIGNAL, &info, 0) < 0 ? negative_errno() : 0;
                patience += l->stop_grace_usec;
                job_set_state(j, JOB_STATE_STOPPING);
        } else if (!kill_told && job_kill_direct(j) >= 0) {
                r = 0; /* the watchdog still covers a supervisor that never completes the record */
                if (j->state < JOB_STATE_KILLING) /* a kill confirmed at once is CONFIRMED already */
                        job_set_state(j, JOB_STATE_KILLING);
        } else {
                r = pidref_kill(&l->supervisor, SUPERVISOR_KILL_SIGNAL);
                if (j->state < JOB_STATE_KILLING)
                        job_set_state(j, JOB_STATE_KILLING);
        }
        if (r < 0 && r != -ESRCH)
                log_warning_errno(r, "Job %s: cannot signal its supervisor: %m", j->id);
        job_release_unless_ended(j, patience);
}

void job_kill(Job *j) {
        assert(!job_is_ended(j));
        if (job_is_queued(j))
                return job_end_unstarted(j, JOB_KILLED, 0, NULL);
        if (j->live->request == JOB_REQUEST_KILL)
                return;
        j->live->request = JOB_REQUEST_KILL; /* a Kill after a Stop: at once now */
        /* A starting job is told once it runs (job_started); a job being
         * released ends killed anyway. */
        if (job_is_supervised(j))
                job_tell_supervisor(j);
}

void job_stop(Job *j, int sig, uint64_t grace_usec) {
        assert(!job_is_ended(j));
        if (job_is_queued(j))
                return job_end_unstarted(j, JOB_KILLED, 0, NULL);
        /* A stop after a stop or a kill changes nothing: it is under way. */
        if (j->live->request != JOB_REQUEST_NONE)
                return;
        j->live->request = JOB_REQUEST_STOP;
        j->live->stop_signal = sig;
        j->live->stop_grace_usec = grace_usec;
        if (job_is_supervised(j))
                job_tell_supervisor(j);
}

/* --- running ----------------------------------------------------------- */

void job_started(Job *j) {
        Runtime *rt = j->runtime;
        assert(job_is_starting(j));

        int r = job_read_run(j);
        if (r >= 0)
                r = pidref_verify(j->live->run->supervisor_pid, j->live->run->supervisor_token, &j->live->supervisor);
        job_set_state(j, JOB_STATE_RUNNING); /* the held supervisor's pipes go */

        if (r == PIDREF_OWNED)
                r = job_watch_supervisor(j);
        else if (r >= 0)
                r = -ESRCH; /* gone already: the exit path below reads its result */
        if (r < 0) {
                (void) on_supervisor_exit(NULL, -EBADF, 0, j);
                if (job_is_ended(j))
                        return; /* ended before anyone heard of it: its end told it all */
        }

        /* Launch's answer first: nothing after it here is the caller's wait. */
        if (rt->notifier)
                rt->notifier->job_running(rt->notifier_data, j);
        job_announce(j);
        job_log_started(j);
        supervisor_pool_refill(rt);

        if (j->live && j->live->request != JOB_REQUEST_NONE && job_is_supervised(j))
                job_tell_supervisor(j);
}

/* --- the release --------------------------------------------------------- */

/* How long a release may wait for a cgroup to empty after killing it. */
#define RELEASE_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* How often to look again where no event tells (a process group). */
#define RELEASE_POLL_USEC (20 * USEC_PER_MSEC)

/* A supervisor publishes its result before it exits: one that bgrund found
 * gone (or that the release killed) may have published it meanwhile, and
 * that real end must win over the release's guess. */
static bool job_end_if_published(Job *j) {
        JobResult res = {};
        if (job_store_read_result(j->live->dir_fd, &res) < 0)
                return false;
        log_debug("Job %s: its supervisor published its end after all", j->id);
        job_end_with_result(j, &res);
        return true;
}

static void job_release_finish(Job *j, bool dead, TeardownMethod method) {
        assert(j->state == JOB_STATE_RELEASING);
        if (job_end_if_published(j))
                return;
        bool killed = j->live->request != JOB_REQUEST_NONE;
        /* A teardown its supervisor confirmed (and Kill may have answered
         * with) stays what the record says, whatever the release found. */
        JobTeardown t;
        bool confirmed = job_teardown_known(j) ? (t = j->live->teardown, true)
                                               : job_teardown_read(j->live->dir_fd, &t) >= 0;
        if (confirmed) {
                killed = true;
                dead = t.dead;
                method = t.method;
        }
        JobResult res = {
                .status = confirmed ? t.status : killed ? JOB_KILLED : JOB_FAILED,
                .exit_code = -1,
                .executed = j->live->run != NULL,
                .contained = job_contained(j->live->spec.mechanism, j->live->run != NULL, j->live->run),
                .started_at = j->started_at,
                .finished_at = now_realtime_usec(),
                .dead = dead,
                .method = method,
                .confirmed_at = confirmed ? t.confirmed_at : dead ? now_realtime_usec() : 0,
        };
        res.timed_out = res.status == JOB_TIMED_OUT;
        if (j->live->damage)
                snprintf(res.reason, sizeof res.reason,
                         "damaged record: its %s was unreadable when bgrund started; its containment was released",
                         j->live->damage);
        else if (confirmed)
                strcpy(res.reason, "its supervisor was lost after confirming its teardown");
        else
                strcpy(res.reason, killed ? "killed by bgrund: its supervisor did not answer"
                                          : "the job's supervisor was lost; its containment was released");
        int r = job_store_finish(j->live->dir_fd, &res);
        if (r < 0)
                log_error_errno(r, "Failed to record the end of job %s: %m", j->id);
        job_end(j, res.status, &res);
}

/* Whether nothing of the job is left, as far as its mechanism can tell. A
 * mechanism that cannot tell (no run.json to look at) proves death only
 * when the supervisor never ran the command: one this bgrund spawned (its
 * spawned_pid) was let go before any release of it, so it may have; one
 * found at load without run.json had not started it. */
static bool job_release_confirmed(Job *j) {
        Containment *c = job_containment(j);
        int r = containment_is_empty(c, j->live->run, j->live->teardown_handle);
        if (r >= 0)
                return r > 0;
        return !j->live->run && j->live->start.spawned_pid == 0;
}

static int on_release_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        if (fd >= 0)
                (void) cgroup_events_watch_populated(fd); /* re-armed; confirmed below as ever */
        if (job_release_confirmed(j))
                job_release_finish(j, true, job_containment(j)->ops->teardown_method);
        return 0;
}

/* For a mechanism where nothing tells when the job is gone: ask again. */
static int on_release_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        if (job_release_confirmed(j)) {
                job_release_finish(j, true, job_containment(j)->ops->teardown_method);
                return 0;
        }
        (void) sd_event_source_set_time_relative(s, RELEASE_POLL_USEC);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_release_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        log_warning("Job %s: containment not confirmed empty after teardown", j->id);
        job_release_finish(j, job_release_confirmed(j), job_containment(j)->ops->teardown_method);
        return 0;
}

void job_release(Job *j) {
        Runtime *rt = j->runtime;
        Containment *c = job_containment(j);
        assert(!job_is_ended(j) && j->state != JOB_STATE_RELEASING);
        int r;

        if (job_end_if_published(j))
                return;
        log_info("Job %s: supervisor not verified, releasing its containment", j->id);
        rt->reaped.released++;
        job_set_state(j, JOB_STATE_RELEASING);
        /* From here the release owns the end: the supervisor's exit, which
         * the kill below may cause, is no news. */
        j->live->supervisor_source = sd_event_source_disable_unref(j->live->supervisor_source);
        j->live->kill_watchdog = sd_event_source_disable_unref(j->live->kill_watchdog);
        job_kill_direct_done(j->live);

        TeardownMethod method = c->ops->teardown_method;
        _cleanup_free_ char *cgroup = NULL;
        r = containment_job_cgroup(c, j->live->dir_fd, &j->live->spec, &cgroup);
        if (r < 0) {
                log_error_errno(r, "Job %s: cannot name its containment: %m", j->id);
                job_release_finish(j, false, method);
                return;
        }
        r = containment_kill(c, j->id, cgroup, j->live->run, &j->live->teardown_handle);
        if (r == -ENOENT) {
                job_release_finish(j, true, TEARDOWN_CGROUP_GONE);
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Job %s: cannot kill its containment: %m", j->id);
                job_release_finish(j, false, method);
                return;
        }
        if (job_release_confirmed(j)) {
                job_release_finish(j, true, method);
                return;
        }

        int ifd;
        r = containment_watch(c, j->live->teardown_handle, &ifd);
        if (r >= 0) {
                r = sd_event_add_io(rt->event, &j->live->teardown_source, ifd, CGROUP_EVENTS_WATCH_EVENTS,
                                    on_release_event, j);
                if (r < 0)
                        safe_close(ifd);
                else
                        (void) sd_event_source_set_io_fd_own(j->live->teardown_source, true);
        } else if (r == -EOPNOTSUPP)
                r = sd_event_add_time_relative(rt->event, &j->live->teardown_source, CLOCK_MONOTONIC,
                                               RELEASE_POLL_USEC, 0, on_release_poll, j);
        if (r >= 0)
                r = sd_event_add_time_relative(rt->event, &j->live->teardown_timer, CLOCK_MONOTONIC,
                                               RELEASE_TIMEOUT_USEC, 0, on_release_timeout, j);
        if (r < 0)
                job_release_finish(j, job_release_confirmed(j), method);
        else
                /* The watch exists now; catch an emptying that came before it. */
                (void) on_release_event(NULL, -EBADF, 0, j);
}

static int on_kill_watchdog(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        j->live->kill_watchdog = sd_event_source_disable_unref(j->live->kill_watchdog);
        if (!job_is_supervised(j))
                return 0;
        log_warning("Job %s: its supervisor did not end it after its kill; releasing its containment", j->id);
        job_release(j);
        return 0;
}

void job_release_unless_ended(Job *j, uint64_t patience) {
        JobLive *l = j->live;
        l->kill_watchdog = sd_event_source_disable_unref(l->kill_watchdog);
        int r = sd_event_add_time_relative(j->runtime->event, &l->kill_watchdog, CLOCK_MONOTONIC, patience, 0,
                                           on_kill_watchdog, j);
        if (r < 0)
                log_warning_errno(r, "Job %s: no kill watchdog: %m", j->id);
}
