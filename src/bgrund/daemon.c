/* SPDX-License-Identifier: MIT */
/* bgrund's core: the job table and each job's lifecycle. A job is STARTING
 * while its containment backend sets it up, RUNNING once its supervisor has
 * been verified and is watched through a pidfd, and ENDED once result.json is
 * final. Ended jobs keep only a small summary in memory; their records are
 * read from the store on demand, so memory stays flat as they pile up. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "bgrun/bus-api.h"
#include "bus-record.h"
#include "cgroup.h"
#include "containment.h"
#include "daemon.h"
#include "grant.h"
#include "job-listing.h"
#include "job-object.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"
#include "manager.h"
#include "polkit.h"
#include "process-tree.h"
#include "reaper.h"
#include "supervisor-spawn.h"

#define REAP_TEARDOWN_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* How long a supervisor may take to answer a Kill before bgrund kills its
 * whole unit itself; a healthy one answers within milliseconds. */
#define KILL_WATCHDOG_USEC (5 * USEC_PER_SEC)


/* --- jobs in memory ---------------------------------------------------- */

static Job *job_new(Daemon *d, const char *id, const char *session_id) {
        Job *j = calloc(1, sizeof(Job));
        if (!j)
                return NULL;
        *j = (Job) { .daemon = d };
        strcpy(j->id, id);
        snprintf(j->path, sizeof j->path, BGRUN_JOB_PATH_PREFIX "/%s", id);
        j->session_id = strdup(session_id);
        if (!j->session_id) {
                free(j);
                return NULL;
        }
        return j;
}

static int job_make_live(Job *j) {
        j->live = calloc(1, sizeof(JobLive));
        if (!j->live)
                return -ENOMEM;
        *j->live = (JobLive) {
                .dir_fd = -EBADF,
                .supervisor = PIDREF_NULL,
                .teardown_cgroup_fd = -EBADF,
                .spawned_pidfd = -EBADF,
                .go_fd = -EBADF,
        };
        return 0;
}

static void waiter_free(Waiter *w) {
        sd_event_source_disable_unref(w->timer);
        sd_bus_message_unref(w->message);
        free(w);
}

/* Drop what only a live job needs. Pending callers must have been answered
 * (or are dropped unanswered, on shutdown). */
static void job_release_live_state(Job *j) {
        JobLive *l = TAKE_PTR(j->live);
        if (!l)
                return;
        sd_event_source_disable_unref(l->supervisor_source);
        sd_event_source_disable_unref(l->ready_source);
        sd_event_source_disable_unref(l->start_timer);
        sd_event_source_disable_unref(l->teardown_source);
        sd_event_source_disable_unref(l->teardown_timer);
        sd_event_source_disable_unref(l->kill_watchdog);
        safe_close(l->teardown_cgroup_fd);
        safe_close(l->spawned_pidfd);
        safe_close(l->go_fd);
        safe_close(l->dir_fd);
        pidref_done(&l->supervisor);
        job_spec_done(&l->spec);
        job_run_done(&l->run);
        while (l->waiters) {
                Waiter *w = l->waiters;
                l->waiters = w->next;
                waiter_free(w);
        }
        sd_bus_message_unref(l->launch);
        free(l);
}

static Job *job_free(Job *j) {
        if (!j)
                return NULL;
        job_release_live_state(j);
        free(j->session_id);
        free(j);
        return NULL;
}

static void cache_drop(Daemon *d) {
        d->cached_id[0] = '\0';
        job_spec_done(&d->cached_spec);
        job_run_done(&d->cached_run);
        d->cached_result = (JobResult) {};
        d->cached_have_run = false;
        d->cached_output_bytes = 0;
}

int job_view(Job *j, JobView *ret) {
        Daemon *d = j->daemon;
        int r;

        if (j->phase != JOB_PHASE_ENDED) {
                *ret = (JobView) {
                        .spec = &j->live->spec,
                        .run = j->live->have_run ? &j->live->run : NULL,
                        .status = JOB_RUNNING,
                };
                (void) job_store_output_size(j->live->dir_fd, &ret->output_bytes);
                return 0;
        }

        /* An ended job's record is final, its output too: read once. */
        if (!streq(d->cached_id, j->id)) {
                _cleanup_close_ int dir_fd = -EBADF;
                r = job_store_open_job(d->jobs_fd, j->id, &dir_fd);
                if (r < 0)
                        return r;
                cache_drop(d);
                r = job_store_read_spec(dir_fd, &d->cached_spec);
                if (r >= 0)
                        r = job_store_read_result(dir_fd, &d->cached_result);
                if (r < 0) {
                        cache_drop(d);
                        return r;
                }
                d->cached_have_run = job_store_read_run(dir_fd, &d->cached_run) >= 0;
                (void) job_store_output_size(dir_fd, &d->cached_output_bytes);
                strcpy(d->cached_id, j->id);
        }

        *ret = (JobView) {
                .spec = &d->cached_spec,
                .run = d->cached_have_run ? &d->cached_run : NULL,
                .result = &d->cached_result,
                .status = d->cached_result.status,
                .output_bytes = d->cached_output_bytes,
        };
        return 0;
}

int job_read_spec(Job *j, JobSpec *ret) {
        _cleanup_close_ int dir_fd = -EBADF;
        int r = job_store_open_job(j->daemon->jobs_fd, j->id, &dir_fd);
        return r < 0 ? r : job_store_read_spec(dir_fd, ret);
}

int job_open_output(Job *j, int *ret_fd) {
        if (j->live && j->live->dir_fd >= 0)
                return job_store_open_output(j->live->dir_fd, O_RDONLY, ret_fd);
        _cleanup_close_ int dir_fd = -EBADF;
        int r = job_store_open_job(j->daemon->jobs_fd, j->id, &dir_fd);
        return r < 0 ? r : job_store_open_output(dir_fd, O_RDONLY, ret_fd);
}

/* --- answering callers ------------------------------------------------- */

static int reply_launch(Job *j) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = TAKE_PTR(j->live->launch);
        if (!m)
                return 0;
        return sd_bus_reply_method_return(m, "so", j->id, j->path);
}

/* Start the answer to call with the job's record at hand. When the record
 * cannot be read, call is answered with that error and *ret stays NULL. */
static int begin_record_reply(Job *j, sd_bus_message *call, JobView *v, sd_bus_message **ret) {
        *ret = NULL;
        int r = job_view(j, v);
        if (r < 0)
                return sd_bus_reply_method_errnof(call, r, "Cannot read the record of job %s: %m", j->id);
        return sd_bus_message_new_method_return(call, ret);
}

int job_reply_record(Job *j, sd_bus_message *call) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        JobView v;
        int r = begin_record_reply(j, call, &v, &reply);
        if (r < 0 || !reply)
                return r;
        r = bus_append_record(reply, &v);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int reply_kill(sd_bus_message *call, Job *j, bool killed) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        JobView v;
        int r = begin_record_reply(j, call, &v, &reply);
        if (r < 0 || !reply)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0) r = sd_bus_message_append(reply, "{sv}", "killed", "b", (int) killed);
        if (r >= 0) r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r >= 0) r = sd_bus_message_append(reply, "s", "teardown");
        if (r >= 0) r = sd_bus_message_open_container(reply, 'v', "a{sv}");
        if (r >= 0) r = bus_append_teardown(reply, &v);
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

/* --- the end of a job -------------------------------------------------- */

/* An ended job's grant is released once its teardown is confirmed. The
 * supervisor releases it itself; this covers a supervisor that died between
 * writing its result and releasing. */
static void job_finish_grant(int dir_fd, const JobResult *res) {
        int r = job_store_settle_grant(dir_fd, res);
        if (r < 0)
                log_warning_errno(r, "Failed to release a grant: %m");
}

/* res: the job's result as read from result.json, taken over (its record
 * then fills the cache from memory, for the signals and answers below), or
 * NULL to have the record read from disk when it is next needed. */
static void job_end(Job *j, JobStatus status, JobResult *res) {
        Daemon *d = j->daemon;
        if (!j->live)
                return;

        /* Whoever waits is answered after the state changed, from the record
         * on disk, like any later caller. */
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *launch = TAKE_PTR(j->live->launch);
        Waiter *waiters = TAKE_PTR(j->live->waiters);

        j->status = status;
        j->phase = JOB_PHASE_ENDED;
        if (res) {
                cache_drop(d);
                d->cached_spec = TAKE_STRUCT(j->live->spec);
                d->cached_run = TAKE_STRUCT(j->live->run);
                d->cached_have_run = j->live->have_run;
                d->cached_result = TAKE_STRUCT(*res);
                (void) job_store_output_size(j->live->dir_fd, &d->cached_output_bytes);
                strcpy(d->cached_id, j->id);
        } else if (streq(d->cached_id, j->id))
                cache_drop(d);
        job_release_live_state(j);
        d->n_running--;
        manager_emit_running_jobs_changed(d);

        /* A job that failed during setup still exists: Launch names it. */
        if (launch)
                (void) sd_bus_reply_method_return(launch, "so", j->id, j->path);

        (void) sd_bus_emit_properties_changed_strv(d->bus, j->path, BGRUN_JOB_INTERFACE, NULL);
        (void) sd_bus_emit_signal(d->bus, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, "JobRemoved", "sos",
                                  j->id, j->path, job_status_to_string(status));

        while (waiters) {
                Waiter *w = waiters;
                waiters = w->next;
                if (w->is_kill)
                        (void) reply_kill(w->message, j, status == JOB_KILLED);
                else
                        (void) job_reply_record(j, w->message);
                waiter_free(w);
        }
        log_debug("Job %s ended: %s", j->id, job_status_to_string(status));
}

/* The supervisor is gone without a result, or cannot be verified: kill the
 * job's whole containment, confirm it empty, and record why it ended. */
static void job_reap_finish(Job *j, bool dead, TeardownMethod method) {
        bool killed = j->live->kill_requested;
        JobResult res = {
                .status = killed ? JOB_KILLED : JOB_FAILED,
                .exit_code = -1,
                .executed = j->live->have_run,
                .contained = job_contained(j->live->spec.mechanism, j->live->have_run ? &j->live->run : NULL),
                .finished_at = now_realtime_usec(),
                .dead = dead,
                .method = method,
                .confirmed_at = dead ? now_realtime_usec() : 0,
        };
        strcpy(res.reason, killed ? "killed by bgrund: its supervisor did not answer"
                                  : "the job's supervisor was lost; its containment was released");
        int r = job_store_finish(j->live->dir_fd, &res);
        if (r < 0)
                log_error_errno(r, "Failed to record the end of job %s: %m", j->id);
        job_end(j, res.status, &res);
}

static int on_reap_cgroup_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        char buf[4096];
        while (read(fd, buf, sizeof buf) > 0)
                ;
        if (cgroup_is_populated(j->live->teardown_cgroup_fd) == 0)
                job_reap_finish(j, true, TEARDOWN_CGROUP_KILL);
        return 0;
}

static int on_reap_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        log_warning("Job %s: containment not confirmed empty after teardown", j->id);
        job_reap_finish(j, cgroup_is_populated(j->live->teardown_cgroup_fd) == 0, TEARDOWN_CGROUP_KILL);
        return 0;
}

/* Release the containment of a job whose supervisor cannot be verified:
 * kill it, confirm it empty (asynchronously for a cgroup) and record the job
 * as failed. */
static void job_reap(Job *j) {
        Daemon *d = j->daemon;
        int r;

        log_info("Job %s: supervisor not verified, releasing its containment", j->id);
        /* From here the reaper owns the end: the supervisor's exit, which the
         * kill below may cause, is no news. */
        j->live->supervisor_source = sd_event_source_disable_unref(j->live->supervisor_source);
        j->live->kill_watchdog = sd_event_source_disable_unref(j->live->kill_watchdog);

        if (j->live->spec.mechanism == MECHANISM_PROCESS_GROUP) {
                /* Signal only a verified leader; a group whose leader is gone
                 * cannot be told apart from a stranger's, so it is left alone
                 * and the record says the teardown is unconfirmed. So does
                 * it for a supervisor let go without a run.json: it may have
                 * left a command behind that nothing can find. */
                bool dead = !j->live->let_go;
                if (j->live->have_run) {
                        PidRef leader = PIDREF_NULL;
                        if (pidref_verify(j->live->run.pid, j->live->run.start_token, &leader) == PIDREF_OWNED) {
                                /* The group first, while its verified
                                 * leader still holds the group's id. */
                                (void) killpg(leader.pid, SIGKILL);
                                (void) pidref_kill(&leader, SIGKILL);
                                pidref_done(&leader);
                        }
                        dead = !process_group_has_members(j->live->run.pid);
                }
                job_reap_finish(j, dead, TEARDOWN_PROCESS_GROUP);
                return;
        }

        _cleanup_free_ char *path = NULL;
        r = job_unit_cgroup(j->id, &path);
        if (r >= 0)
                r = cgroup_open(path, &j->live->teardown_cgroup_fd);
        if (r == -ENOENT) {
                job_reap_finish(j, true, TEARDOWN_CGROUP_GONE);
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Job %s: cannot open its cgroup: %m", j->id);
                job_reap_finish(j, false, TEARDOWN_CGROUP_KILL);
                return;
        }

        (void) cgroup_kill(j->live->teardown_cgroup_fd);
        if (cgroup_is_populated(j->live->teardown_cgroup_fd) == 0) {
                job_reap_finish(j, true, TEARDOWN_CGROUP_KILL);
                return;
        }

        int ifd;
        r = cgroup_events_watch(j->live->teardown_cgroup_fd, &ifd);
        if (r >= 0) {
                r = sd_event_add_io(d->event, &j->live->teardown_source, ifd, EPOLLIN, on_reap_cgroup_event, j);
                if (r < 0)
                        safe_close(ifd);
                else
                        (void) sd_event_source_set_io_fd_own(j->live->teardown_source, true);
        }
        if (r >= 0)
                r = sd_event_add_time_relative(d->event, &j->live->teardown_timer, CLOCK_MONOTONIC,
                                               REAP_TEARDOWN_TIMEOUT_USEC, 0, on_reap_timeout, j);
        if (r < 0)
                job_reap_finish(j, cgroup_is_populated(j->live->teardown_cgroup_fd) == 0, TEARDOWN_CGROUP_KILL);
        else
                /* The watch exists now; catch an emptying that came before it. */
                (void) on_reap_cgroup_event(NULL, -1, 0, j);
}

static int on_supervisor_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        JobResult res = {};

        j->live->supervisor_source = sd_event_source_disable_unref(j->live->supervisor_source);

        int r = job_store_read_result(j->live->dir_fd, &res);
        if (r >= 0) {
                job_finish_grant(j->live->dir_fd, &res);
                job_end(j, res.status, &res);
        } else {
                log_warning_errno(r, "Job %s: supervisor exited without a result: %m", j->id);
                j->daemon->reaped.released++;
                job_reap(j);
        }
        return 0;
}

static int job_watch_supervisor(Job *j) {
        return sd_event_add_io(j->daemon->event, &j->live->supervisor_source, j->live->supervisor.fd, EPOLLIN,
                               on_supervisor_exit, j);
}

/* --- starting ---------------------------------------------------------- */

static int on_kill_watchdog(sd_event_source *s, uint64_t usec, void *userdata);

/* The supervisor does the teardown (cgroup.kill, confirm empty) and its exit
 * answers the Kill. The signal goes through the pidfd that was verified
 * against the supervisor's start token; the watchdog covers a supervisor
 * that does not answer it. */
static void job_tell_supervisor_to_kill(Job *j) {
        int r = pidref_kill(&j->live->supervisor, SIGTERM);
        if (r < 0 && r != -ESRCH)
                log_warning_errno(r, "Job %s: cannot signal its supervisor: %m", j->id);
        r = sd_event_add_time_relative(j->daemon->event, &j->live->kill_watchdog, CLOCK_MONOTONIC,
                                       KILL_WATCHDOG_USEC, 0, on_kill_watchdog, j);
        if (r < 0)
                log_warning_errno(r, "Job %s: no kill watchdog: %m", j->id);
}

void job_started(Job *j) {
        Daemon *d = j->daemon;

        int r = job_store_read_run(j->live->dir_fd, &j->live->run);
        if (r >= 0) {
                j->live->have_run = true;
                r = pidref_verify(j->live->run.supervisor_pid, j->live->run.supervisor_token, &j->live->supervisor);
        }
        j->phase = JOB_PHASE_RUNNING;
        j->live->spawned_pidfd = safe_close(j->live->spawned_pidfd);

        if (r == PIDREF_OWNED)
                r = job_watch_supervisor(j);
        else if (r >= 0)
                r = -ESRCH; /* gone already: the exit path below reads its result */
        if (r < 0)
                (void) on_supervisor_exit(NULL, -1, 0, j);

        if (j->phase == JOB_PHASE_ENDED)
                return; /* job_end answered Launch */

        (void) sd_bus_emit_signal(d->bus, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, "JobNew", "so", j->id,
                                  j->path);
        (void) reply_launch(j);

        if (j->live->kill_requested)
                job_tell_supervisor_to_kill(j);
}

static int try_next_backend(Job *j, unsigned start_index);

static void job_discard(Job *j) {
        Daemon *d = j->daemon;
        /* Kill or Wait calls made while it was starting: it never existed. */
        for (Waiter *w = j->live->waiters; w; w = w->next)
                (void) sd_bus_reply_method_errorf(w->message, BGRUN_ERROR_NO_SUCH_JOB,
                                                  "No such job: %s never started", j->id);
        (void) job_table_remove(&d->jobs, j->id);
        (void) job_store_remove(d->jobs_fd, j->id);
        d->n_running--;
        manager_emit_running_jobs_changed(d);
        job_free(j);
}

void job_start_failed(Job *j, const char *message) {
        Daemon *d = j->daemon;
        JobResult res = {};

        /* Nothing of the failed attempt may go on: no supervisor of it. (A
         * late answer from systemd about it finds the job moved on.) */
        supervisor_abort(j);

        /* A supervisor that failed its own setup published a result: the job
         * exists and is failed, nothing of the command ran. */
        if (job_store_read_result(j->live->dir_fd, &res) >= 0) {
                job_finish_grant(j->live->dir_fd, &res);
                job_end(j, res.status, NULL); /* a rare path: the record is read when needed */
                return;
        }

        log_warning("Job %s: %s", j->id, message);

        /* If the command may have been exec'd (run.json exists, or the
         * supervisor was let go and died before saying) it must never run a
         * second time through another mechanism: release whatever is left of
         * it and record the job as failed. */
        bool ran = job_store_read_run(j->live->dir_fd, &j->live->run) >= 0;
        if (ran || j->live->let_go) {
                j->live->have_run = ran;
                j->phase = JOB_PHASE_RUNNING;
                (void) sd_bus_emit_signal(d->bus, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, "JobNew", "so",
                                          j->id, j->path);
                d->reaped.released++;
                job_reap(j); /* answers Launch with the job when it ends */
                return;
        }

        /* Try the next mechanism the operator allows. */
        for (unsigned i = 0; i < d->config.n_mechanisms; i++)
                if (d->config.mechanisms[i] == j->live->spec.mechanism) {
                        if (try_next_backend(j, i + 1) >= 0)
                                return;
                        break;
                }

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *launch = TAKE_PTR(j->live->launch);
        job_discard(j);
        if (launch)
                (void) sd_bus_reply_method_errorf(launch, BGRUN_ERROR_CONTAINMENT_REFUSED,
                                                  "No containment for the job (%s); nothing was run", message);
}

/* The mechanism in spec, and the unit it names (systemd: the job's scope). */
static int spec_set_mechanism(JobSpec *spec, Mechanism m) {
        spec->mechanism = m;
        free(spec->unit);
        spec->unit = NULL;
        if (m == MECHANISM_SYSTEMD)
                return job_unit_name(spec->id, &spec->unit);
        spec->unit = strdup("");
        return spec->unit ? 0 : -ENOMEM;
}

/* The first backend from config.mechanisms[from] on that may run a job now:
 * available, and containing unless the mode is report-only. Its index, or
 * -1 when there is none. */
static int first_usable_backend(Daemon *d, unsigned from) {
        for (unsigned i = from; i < d->config.n_mechanisms; i++) {
                const ContainmentBackend *b = containment_backend(d->config.mechanisms[i]);
                if (b && b->available(d) && (b->contains || d->config.mode == CONTAINMENT_REPORT_ONLY))
                        return (int) i;
        }
        return -1;
}

/* Start j with the first usable backend from config.mechanisms[start_index]
 * on, falling further back when one fails to start. */
static int try_next_backend(Job *j, unsigned start_index) {
        Daemon *d = j->daemon;

        for (int i = first_usable_backend(d, start_index); i >= 0; i = first_usable_backend(d, (unsigned) i + 1)) {
                const ContainmentBackend *b = containment_backend(d->config.mechanisms[i]);
                int r = 0;

                /* Only a fallback changes the spec written at Launch. */
                if (j->live->spec.mechanism != b->mechanism) {
                        j->live->spec.mechanism = b->mechanism;
                        r = spec_set_mechanism(&j->live->spec, b->mechanism);
                        if (r >= 0)
                                r = job_store_write_spec(j->live->dir_fd, &j->live->spec);
                }
                /* The grant is on disk before anything of the job can run. */
                _cleanup_free_ char *cgroup = NULL;
                if (r >= 0 && b->mechanism == MECHANISM_SYSTEMD)
                        r = job_unit_cgroup(j->id, &cgroup);
                if (r >= 0)
                        r = grant_open(j->live->dir_fd, b->mechanism, j->live->spec.unit, cgroup);
                if (r >= 0)
                        r = b->start(j);
                if (r >= 0)
                        return 0;
                log_warning_errno(r, "Job %s: mechanism %s failed to start: %m", j->id,
                                  mechanism_to_string(b->mechanism));
        }
        return -EHOSTUNREACH;
}

int daemon_launch(Daemon *d, sd_bus_message *m, JobSpec *spec, const LaunchLimits *limits, sd_bus_error *error) {
        int r;

        /* Pick the mechanism before creating anything, so a refusal leaves
         * no trace and the spec is written once. */
        int first = first_usable_backend(d, 0);
        if (first < 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_CONTAINMENT_REFUSED,
                                         "Containment mode is enforcing and no containing mechanism is available; nothing was run");

        for (int attempt = 0;; attempt++) {
                r = job_id_generate(spec->id);
                if (r < 0)
                        return r;
                if (!job_table_get(&d->jobs, spec->id))
                        break;
                if (attempt > 16)
                        return -EEXIST;
        }
        r = spec_set_mechanism(spec, d->config.mechanisms[first]);
        if (r < 0)
                return r;
        spec->created_at = now_realtime_usec();

        Job *j = job_new(d, spec->id, spec->session_id);
        if (!j)
                return -ENOMEM;
        j->owner = spec->owner;
        j->created_at = spec->created_at;
        if (job_make_live(j) < 0) {
                job_free(j);
                return -ENOMEM;
        }
        j->live->limits = *limits;

        r = job_store_create(d->jobs_fd, spec, &j->live->dir_fd);
        if (r < 0) {
                job_free(j);
                return sd_bus_error_set_errnof(error, r, "Cannot create the job's record: %m");
        }
        j->live->spec = *spec;
        *spec = (JobSpec) {};

        r = job_table_put(&d->jobs, j);
        if (r < 0) {
                (void) job_store_remove(d->jobs_fd, j->id);
                job_free(j);
                return r;
        }
        d->n_running++;
        j->live->launch = sd_bus_message_ref(m);

        r = try_next_backend(j, (unsigned) first);
        if (r < 0) {
                j->live->launch = sd_bus_message_unref(j->live->launch);
                job_discard(j);
                return sd_bus_error_setf(error, BGRUN_ERROR_CONTAINMENT_REFUSED,
                                         "No mechanism could start the job; nothing was run");
        }
        manager_emit_running_jobs_changed(d);
        return 1;
}

/* --- Kill, Wait, Forget ------------------------------------------------ */

static int on_wait_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Waiter *w = userdata;
        Job *j = w->job;
        for (Waiter **p = &j->live->waiters; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        break;
                }
        (void) job_reply_record(j, w->message);
        waiter_free(w);
        return 0;
}

static int job_add_waiter(Job *j, sd_bus_message *m, bool is_kill, uint64_t timeout_usec) {
        Waiter *w = calloc(1, sizeof(Waiter));
        if (!w)
                return -ENOMEM;
        *w = (Waiter) { .job = j, .message = sd_bus_message_ref(m), .is_kill = is_kill };
        /* Anything past a century is forever (and would overflow the clock). */
        if (timeout_usec < 100ULL * 365 * 24 * 3600 * USEC_PER_SEC) {
                int r = sd_event_add_time_relative(j->daemon->event, &w->timer, CLOCK_MONOTONIC, timeout_usec, 0,
                                                   on_wait_timeout, w);
                if (r < 0) {
                        waiter_free(w);
                        return r;
                }
        }
        w->next = j->live->waiters;
        j->live->waiters = w;
        return 0;
}

static int on_kill_watchdog(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        j->live->kill_watchdog = sd_event_source_disable_unref(j->live->kill_watchdog);
        if (j->phase != JOB_PHASE_RUNNING || j->live->teardown_cgroup_fd >= 0)
                return 0;
        log_warning("Job %s: supervisor did not answer the kill; killing its unit", j->id);
        j->daemon->reaped.released++;
        job_reap(j);
        return 0;
}

int job_kill(Job *j, sd_bus_message *m, sd_bus_error *error) {
        if (j->phase == JOB_PHASE_ENDED)
                return reply_kill(m, j, false);

        int r = job_add_waiter(j, m, true, UINT64_MAX);
        if (r < 0)
                return r;
        if (j->live->kill_requested)
                return 1;
        j->live->kill_requested = true;
        /* A starting job is told once it runs (job_started). */
        if (j->phase == JOB_PHASE_RUNNING)
                job_tell_supervisor_to_kill(j);
        return 1;
}

int job_wait(Job *j, sd_bus_message *m, uint64_t timeout_usec, sd_bus_error *error) {
        if (j->phase == JOB_PHASE_ENDED || timeout_usec == 0)
                return job_reply_record(j, m);
        int r = job_add_waiter(j, m, false, timeout_usec);
        return r < 0 ? r : 1;
}

int job_forget(Job *j, sd_bus_error *error) {
        Daemon *d = j->daemon;
        if (j->phase != JOB_PHASE_ENDED)
                return sd_bus_error_setf(error, BGRUN_ERROR_JOB_NOT_FINISHED, "Job %s is still running", j->id);

        int r = job_store_remove(d->jobs_fd, j->id);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot remove job %s: %m", j->id);
        if (streq(d->cached_id, j->id))
                cache_drop(d);
        (void) job_table_remove(&d->jobs, j->id);
        job_free(j);
        return 0;
}

/* --- loading the store at start ---------------------------------------- */

static int load_job(Daemon *d, const char *id, ReapCounts *counts) {
        _cleanup_close_ int dir_fd = -EBADF;
        _cleanup_(job_spec_done) JobSpec spec = {};
        JobResult res = {};
        int r;

        r = job_store_open_job(d->jobs_fd, id, &dir_fd);
        if (r < 0)
                return r;
        r = job_store_read_spec(dir_fd, &spec);
        if (r < 0)
                return log_warning_errno(r, "Job %s: unreadable spec, left alone: %m", id);

        Job *j = job_new(d, id, spec.session_id);
        if (!j)
                return -ENOMEM;
        j->owner = spec.owner;
        j->created_at = spec.created_at;
        if (job_table_put(&d->jobs, j) < 0) {
                job_free(j);
                return -ENOMEM;
        }

        bool have_result = job_store_read_result(dir_fd, &res) >= 0;
        if (have_result) {
                j->status = res.status;
                j->phase = JOB_PHASE_ENDED;
                job_finish_grant(dir_fd, &res);
                return 0;
        }

        /* No result: the job was live when bgrund stopped. */
        r = job_make_live(j);
        if (r < 0)
                return r;
        j->phase = JOB_PHASE_RUNNING;
        j->status = JOB_RUNNING;
        j->live->dir_fd = TAKE_FD(dir_fd);
        j->live->spec = spec;
        spec = (JobSpec) {};
        d->n_running++;

        j->live->have_run = job_store_read_run(j->live->dir_fd, &j->live->run) >= 0;
        int supervisor = j->live->have_run ? pidref_verify(j->live->run.supervisor_pid, j->live->run.supervisor_token,
                                                           &j->live->supervisor)
                                           : -ENOENT;
        ReapDecision decision = reap_decide(false, j->live->have_run, supervisor);
        if (decision == REAP_KEEP && job_watch_supervisor(j) >= 0) {
                counts->background_kept++;
                return 0;
        }
        log_debug("Job %s: %s (supervisor check: %d)", id, reap_decision_to_string(decision), supervisor);
        counts->released++;
        job_reap(j);
        return 0;
}

/* Cgroups of job units that no live job accounts for: kill them. */
static unsigned kill_orphan_units(Daemon *d) {
        _cleanup_close_ int slice_fd = -EBADF;
        if (cgroup_open(JOB_SLICE_CGROUP, &slice_fd) < 0)
                return 0;
        _cleanup_closedir_ DIR *dir = fdopendir(dup(slice_fd));
        if (!dir)
                return 0;

        unsigned killed = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                const char *n = de->d_name;
                char id[JOB_ID_MAX];
                if (!job_id_from_unit_name(n, id))
                        continue;
                Job *j = job_table_get(&d->jobs, id);
                if (j && j->phase != JOB_PHASE_ENDED)
                        continue;

                _cleanup_close_ int fd = openat(slice_fd, n, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || cgroup_is_populated(fd) != 1)
                        continue;
                /* No record to confirm anything in: kill it and go on, never
                 * waiting on the event loop. systemd collects the scope once
                 * it is empty. */
                log_info("Killing orphaned job unit %s", n);
                int r = cgroup_kill(fd);
                if (r >= 0)
                        killed++;
                else
                        log_warning_errno(r, "Cannot kill orphaned job unit %s: %m", n);
        }
        return killed;
}

int daemon_load_jobs(Daemon *d, ReapCounts *ret) {
        ReapCounts counts = {};
        _cleanup_closedir_ DIR *dir = fdopendir(dup(d->jobs_fd));
        if (!dir)
                return negative_errno();

        struct dirent *de;
        while ((de = readdir(dir)))
                if (job_id_is_valid(de->d_name)) {
                        int r = load_job(d, de->d_name, &counts);
                        if (r == -ENOMEM)
                                return r;
                }

        counts.orphans_killed = kill_orphan_units(d);
        d->reaped.released += counts.released;
        d->reaped.orphans_killed += counts.orphans_killed;
        if (ret)
                *ret = counts;
        return 0;
}

int daemon_reap(Daemon *d, ReapCounts *ret) {
        ReapCounts counts = {};
        size_t b;
        for (Job *j = job_table_first(&d->jobs, &b), *next; j; j = next) {
                next = job_table_next(&d->jobs, &b, j);
                if (j->phase != JOB_PHASE_RUNNING || j->live->teardown_cgroup_fd >= 0)
                        continue;
                if (j->live->supervisor.fd >= 0 && pidref_check(&j->live->supervisor) == PIDREF_OWNED) {
                        counts.background_kept++;
                        continue;
                }
                /* Its exit is pending in the event queue, or it was never
                 * verified: release it now. */
                d->reaped.released++;
                job_reap(j);
        }
        d->reaped.orphans_killed += kill_orphan_units(d);
        counts.released = d->reaped.released;
        counts.orphans_killed = d->reaped.orphans_killed;
        *ret = counts;
        return 0;
}

/* --- the daemon -------------------------------------------------------- */

int daemon_new(Daemon **ret, const char *state_dir, const BgrunConfig *config) {
        _cleanup_(daemon_freep) Daemon *d = calloc(1, sizeof(Daemon));
        if (!d)
                return -ENOMEM;
        d->jobs_fd = -EBADF;
        d->state_dir = state_dir;
        d->config = *config;

        int r = job_store_open(state_dir, &d->jobs_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to open the job store in %s: %m", state_dir);

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        (void) sd_event_set_watchdog(d->event, true);
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        (void) sd_event_add_signal(d->event, NULL, SIGTERM, NULL, NULL);
        (void) sd_event_add_signal(d->event, NULL, SIGINT, NULL, NULL);
        /* A supervisor that died leaves its go pipe without a reader; that is
         * an EPIPE to handle, never a reason for bgrund to die. */
        (void) signal(SIGPIPE, SIG_IGN);
        /* Each running job holds a few descriptors here, and a soft limit of
         * 1024 would cap bgrund near 300 of them. The hard limit is the
         * operator's; supervisors put the soft one back for the command. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0) {
                d->nofile_soft = rl.rlim_cur;
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        log_warning_errno(negative_errno(), "Cannot raise the soft limit of open files: %m");
        }

        const char *address = getenv("BGRUN_BUS_ADDRESS");
        if (address) {
                r = sd_bus_new(&d->bus);
                if (r >= 0) r = sd_bus_set_address(d->bus, address);
                if (r >= 0) r = sd_bus_set_bus_client(d->bus, true);
                if (r >= 0) r = sd_bus_start(d->bus);
        } else
                r = sd_bus_open_system(&d->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");

        r = sd_bus_attach_event(d->bus, d->event, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");

        r = manager_add_objects(d);
        if (r < 0)
                return log_error_errno(r, "Failed to register the manager object: %m");
        r = job_object_add(d);
        if (r < 0)
                return log_error_errno(r, "Failed to register the job objects: %m");
        r = systemd_unit_setup(d);
        if (r < 0)
                return log_error_errno(r, "Failed to subscribe to systemd: %m");

        *ret = TAKE_PTR(d);
        return 0;
}

Daemon *daemon_free(Daemon *d) {
        if (!d)
                return NULL;
        size_t b;
        for (Job *j = job_table_first(&d->jobs, &b), *next; j; j = next) {
                next = job_table_next(&d->jobs, &b, j);
                job_free(j);
        }
        job_table_clear(&d->jobs);
        cache_drop(d);
        polkit_queries_free(d);
        supervisor_children_free(d);
        job_listings_free(d);
        sd_bus_flush_close_unref(d->bus);
        sd_event_unref(d->event);
        safe_close(d->jobs_fd);
        free(d);
        return NULL;
}

int daemon_run(Daemon *d) {
        /* Own the name last, so no caller ever sees a half-loaded daemon. */
        int r = sd_bus_request_name(d->bus, BGRUN_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire the bus name %s: %m", BGRUN_BUS_NAME);
        return sd_event_loop(d->event);
}
