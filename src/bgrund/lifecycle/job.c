/* SPDX-License-Identifier: MIT */
/* One job's lifecycle: starting under a mechanism, running under a verified
 * supervisor, ending with a final record. The release of its containment
 * when its supervisor is lost is job-release.c's. No bus here: what
 * happened goes to the runtime's notifier. */
#include <assert.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>

#include "containment.h"
#include "grant.h"
#include "job-store.h"
#include "job.h"
#include "job-input.h"
#include "job-log.h"
#include "job-private.h"
#include "log.h"
#include "macro.h"
#include "reaper.h"
#include "runtime.h"
#include "supervisor-protocol.h"
#include "supervisor-spawn.h"
#include "time-util.h"
#include "utf8.h"

/* --- the struct -------------------------------------------------------- */

Job *job_new(Runtime *rt, const JobSpec *spec) {
        _cleanup_free_ Job *j = calloc(1, sizeof(Job));
        if (!j)
                return NULL;
        *j = (Job) { .runtime = rt, .owner = spec->owner, .created_at = spec->created_at };
        strcpy(j->id, spec->id);
        strcpy(j->parent_id, spec->parent);
        j->session_id = strdup(spec->session_id);
        j->command_head = utf8_strndup(spec->command, JOB_COMMAND_HEAD_MAX);
        if (!j->session_id || !j->command_head) {
                free(j->session_id);
                free(j->command_head);
                return NULL;
        }
        return TAKE_PTR(j);
}

int job_make_live(Job *j) {
        assert(!j->live);
        j->live = calloc(1, sizeof(JobLive));
        if (!j->live)
                return -ENOMEM;
        *j->live = (JobLive) {
                .dir_fd = -EBADF,
                .supervisor = PIDREF_NULL,
                .teardown_handle = -EBADF,
                .kill_lock_fd = -EBADF,
                .kill_cgroup_fd = -EBADF,
                .spawned_pidfd = -EBADF,
                .go_fd = -EBADF,
                .control_fd = -EBADF,
                .input_fd = -EBADF,
        };
        return 0;
}

/* Drop what only a live job needs. */
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
        job_kill_direct_done(l);
        safe_close(l->teardown_handle);
        safe_close(l->spawned_pidfd);
        safe_close(l->go_fd);
        job_input_disconnect(l);
        safe_close(l->dir_fd);
        pidref_done(&l->supervisor);
        job_spec_done(&l->spec);
        job_run_done(&l->run);
        free(l);
}

Job *job_free(Job *j) {
        if (!j)
                return NULL;
        Runtime *rt = j->runtime;
        if (rt && rt->notifier && rt->notifier->job_freed)
                rt->notifier->job_freed(rt->notifier_data, j);
        job_release_live_state(j);
        free(j->session_id);
        free(j->command_head);
        free(j);
        return NULL;
}

Containment *job_containment(Job *j) {
        assert(j->live);
        return runtime_containment(j->runtime, j->live->spec.mechanism);
}

/* --- reading ----------------------------------------------------------- */

int job_view(Job *j, JobView *ret) {
        Runtime *rt = j->runtime;
        RecordCache *cache = &rt->cache;

        if (j->phase != JOB_PHASE_ENDED) {
                /* Once confirmed, the slot's status and teardown; the end's
                 * own fields read as while it ran until the result. */
                *ret = (JobView) {
                        .spec = &j->live->spec,
                        .run = j->live->have_run ? &j->live->run : NULL,
                        .status = j->live->confirmed ? j->live->teardown.status : JOB_RUNNING,
                        .teardown = j->live->confirmed ? j->live->teardown : (JobTeardown) {},
                };
                (void) job_store_output_counts(j->live->dir_fd, &ret->output_bytes, &ret->output_dropped_bytes);
                /* Read now, so a figure is never older than the call. */
                if (j->live->have_run && j->live->run.cgroup && j->live->run.cgroup[0])
                        (void) job_usage_read_cgroup_path(j->live->run.cgroup, &ret->usage);
                return 0;
        }

        /* An ended job's record is final, its output too: read once. */
        if (!streq(cache->id, j->id)) {
                _cleanup_close_ int dir_fd = -EBADF;
                int r = job_store_open_job(rt->jobs_fd, j->id, &dir_fd);
                if (r < 0)
                        return r;
                runtime_cache_drop(rt, NULL);
                r = j->damaged ? job_damaged_spec(dir_fd, j->id, &cache->spec)
                               : job_store_read_spec(dir_fd, &cache->spec);
                if (r < 0) {
                        runtime_cache_drop(rt, NULL);
                        return r;
                }
                /* Left incomplete by a full disk: shown failed, saying so. */
                r = job_store_read_result(dir_fd, &cache->result);
                if (r < 0)
                        job_result_incomplete(&cache->result, j->finished_at, r);
                cache->have_run = job_store_read_run(dir_fd, &cache->run) >= 0;
                (void) job_store_output_counts(dir_fd, &cache->output_bytes, &cache->output_dropped_bytes);
                strcpy(cache->id, j->id);
        }

        *ret = (JobView) {
                .spec = &cache->spec,
                .run = cache->have_run ? &cache->run : NULL,
                .result = &cache->result,
                .status = cache->result.status,
                .output_bytes = cache->output_bytes,
                .output_dropped_bytes = cache->output_dropped_bytes,
                .teardown = { cache->result.status, cache->result.dead, cache->result.method,
                              cache->result.confirmed_at },
                .usage = {
                        .cpu_known = cache->result.cpu_usage_known,
                        .cpu_usage_usec = cache->result.cpu_usage_usec,
                        .memory_peak_known = cache->result.memory_peak_known,
                        .memory_peak = cache->result.memory_peak,
                },
        };
        return 0;
}

int job_damaged_spec(int dir_fd, const char *id, JobSpec *ret) {
        _cleanup_(grant_done) Grant g = { .owner = UID_INVALID };
        (void) grant_read(dir_fd, &g);
        _cleanup_(job_spec_done) JobSpec s = {
                .owner = g.owner,
                .uid = g.owner,
                .gid = NO_GROUP_GID,
                .mechanism = g.mechanism,
                .session_id = strdup(""),
                .command = strdup(""),
                .cwd = strdup("/"),
                .user = strdup(""),
                .home = strdup("/"),
                .shell = strdup("/bin/sh"),
                .unit = strdup(g.unit ?: ""),
        };
        if (!s.session_id || !s.command || !s.cwd || !s.user || !s.home || !s.shell || !s.unit)
                return -ENOMEM;
        strcpy(s.id, id);
        *ret = TAKE_STRUCT(s);
        return 0;
}

int job_read_spec(Job *j, JobSpec *ret) {
        _cleanup_close_ int dir_fd = -EBADF;
        int r = job_store_open_job(j->runtime->jobs_fd, j->id, &dir_fd);
        return r < 0 ? r : job_store_read_spec(dir_fd, ret);
}

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
        if (res->dead)
                containment_cleanup(job_containment(j), j->live->dir_fd, &j->live->spec, j->live->releasing);

        j->status = status;
        j->phase = JOB_PHASE_ENDED;
        j->finished_at = res->finished_at;
        uint64_t disk_size;
        if (job_store_disk_size(j->live->dir_fd, &disk_size) >= 0)
                runtime_job_charge(rt, j, disk_size);
        RecordCache *cache = &rt->cache;
        runtime_cache_drop(rt, NULL);
        cache->spec = TAKE_STRUCT(j->live->spec);
        cache->run = TAKE_STRUCT(j->live->run);
        cache->have_run = j->live->have_run;
        cache->result = *res;
        (void) job_store_output_counts(j->live->dir_fd, &cache->output_bytes, &cache->output_dropped_bytes);
        strcpy(cache->id, j->id);
        job_release_live_state(j);
        runtime_job_ended(rt, j);
        runtime_notify_running_jobs(rt);
        if (rt->notifier)
                rt->notifier->job_ended(rt->notifier_data, j);
        log_debug("Job %s ended: %s", j->id, job_status_to_string(status));
        /* Jobs it launched end with it when it was ended from outside, not
         * when it exited on its own: it may have started a server. */
        if (status == JOB_KILLED || status == JOB_TIMED_OUT)
                for (Job *child = j->children; child; child = child->sibling_next)
                        if (child->phase != JOB_PHASE_ENDED)
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
        assert(j->phase == JOB_PHASE_RUNNING);
        int r;
        uint64_t patience = JOB_SUPERVISOR_PATIENCE_USEC;
        if (l->stop_requested && !l->kill_told) {
                siginfo_t info = {
                        .si_signo = SUPERVISOR_STOP_SIGNAL,
                        .si_code = SI_QUEUE,
                        .si_pid = getpid(),
                        .si_uid = getuid(),
                        .si_value.sival_ptr = (void *) (uintptr_t) stop_request_pack(l->stop_signal, l->stop_grace_usec),
                };
                r = pidfd_send_signal(l->supervisor.fd, SUPERVISOR_STOP_SIGNAL, &info, 0) < 0 ? negative_errno() : 0;
                patience += l->stop_grace_usec;
        } else if (!l->kill_told && job_kill_direct(j) >= 0) {
                l->kill_told = true;
                r = 0; /* the watchdog still covers a supervisor that never completes the record */
        } else {
                r = pidref_kill(&l->supervisor, SUPERVISOR_KILL_SIGNAL);
                l->kill_told = true;
        }
        if (r < 0 && r != -ESRCH)
                log_warning_errno(r, "Job %s: cannot signal its supervisor: %m", j->id);
        job_release_unless_ended(j, patience);
}

void job_kill(Job *j) {
        assert(j->phase != JOB_PHASE_ENDED);
        if (j->live->kill_requested && !j->live->stop_requested)
                return;
        j->live->kill_requested = true;
        j->live->stop_requested = false; /* a Kill after a Stop: at once now */
        /* A starting job is told once it runs (job_started); a job being
         * released ends killed anyway. */
        if (j->phase == JOB_PHASE_RUNNING && !j->live->releasing)
                job_tell_supervisor(j);
}

void job_stop(Job *j, int sig, uint64_t grace_usec) {
        assert(j->phase != JOB_PHASE_ENDED);
        /* A stop after a stop or a kill changes nothing: it is under way. */
        if (j->live->kill_requested)
                return;
        j->live->kill_requested = true;
        j->live->stop_requested = true;
        j->live->stop_signal = sig;
        j->live->stop_grace_usec = grace_usec;
        if (j->phase == JOB_PHASE_RUNNING && !j->live->releasing)
                job_tell_supervisor(j);
}

int job_forget(Job *j) {
        Runtime *rt = j->runtime;
        if (j->phase != JOB_PHASE_ENDED)
                return -EBUSY;
        int r = job_store_remove(rt->jobs_fd, j->id);
        if (r < 0)
                return r;
        runtime_remove_job(rt, j);
        job_free(j);
        return 0;
}

/* --- starting ---------------------------------------------------------- */

bool job_awaits_containment(const Job *j, Mechanism m) {
        return j->phase == JOB_PHASE_STARTING && j->live->spec.mechanism == m && !j->live->let_go &&
                j->live->spawned_pidfd >= 0;
}

static void job_notify_new(Job *j) {
        Runtime *rt = j->runtime;
        if (rt->notifier)
                rt->notifier->job_new(rt->notifier_data, j);
}

void job_started(Job *j) {
        Runtime *rt = j->runtime;
        assert(j->phase == JOB_PHASE_STARTING);

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
        if (r < 0) {
                (void) on_supervisor_exit(NULL, -EBADF, 0, j);
                if (j->phase == JOB_PHASE_ENDED)
                        return; /* ended before anyone heard of it: its end told it all */
        }

        job_notify_new(j);
        if (rt->notifier)
                rt->notifier->job_running(rt->notifier_data, j);
        job_log_started(j);
        supervisor_pool_refill(rt);

        if (j->live && j->live->kill_requested && !j->live->releasing)
                job_tell_supervisor(j);
}

/* Never started, nothing ran: it goes as if it never existed. error says
 * why: LAUNCH_START_FAILED (no mechanism could contain it), -EINVAL (the
 * mechanism refused what it was asked), or another -errno. */
static void job_discard(Job *j, int error, const char *message) {
        Runtime *rt = j->runtime;
        assert(j->phase == JOB_PHASE_STARTING && !j->live->let_go);
        runtime_remove_job(rt, j);
        (void) job_store_remove(rt->jobs_fd, j->id);
        runtime_notify_running_jobs(rt);
        if (error == LAUNCH_START_FAILED)
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
        Containment *c = job_containment(j);
        ContainmentJob cj = job_for_containment(j);
        int r = containment_verify(c, &cj, j->live->spawned_pid);
        if (r == 0)
                r = -EREMCHG;
        if (r < 0)
                return r;
        return supervisor_let_go(j);
}

void job_containment_ready(Job *j) {
        assert(job_awaits_containment(j, j->live->spec.mechanism));
        int r = job_let_go(j);
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
        r = containment_start(c, &cj, j->live->spawned_pid);
        if (r > 0)
                r = job_let_go(j);
        if (r < 0) {
                supervisor_abort(j);
                if (plan.pin)
                        supervisor_unpin(j->runtime, j->id);
        }
        return r;
}

int job_start(Job *j, unsigned from) {
        Runtime *rt = j->runtime;
        assert(j->phase == JOB_PHASE_STARTING && !j->live->let_go);

        for (unsigned i = from; i < rt->config.n_mechanisms; i++) {
                Containment *c = runtime_containment(rt, rt->config.mechanisms[i]);
                if (!containment_usable(c))
                        continue;
                j->live->next_mechanism = i + 1;
                bool fatal;
                int r = job_start_with(j, c, &fatal);
                if (r >= 0)
                        return 0;
                log_warning_errno(r, "Job %s: mechanism %s failed to start: %m", j->id,
                                  mechanism_to_string(c->ops->mechanism));
                if (fatal)
                        return r;
        }
        return LAUNCH_START_FAILED;
}

void job_start_refused(Job *j, int error, const char *message) {
        assert(j->phase == JOB_PHASE_STARTING && j->live->let_go);
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
        j->live->let_go = false; /* it ran nothing, and is gone */
        job_discard(j, error, message);
}

void job_start_failed(Job *j, bool may_fall_back, const char *message) {
        JobResult res = {};
        assert(j->phase == JOB_PHASE_STARTING);

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
        bool ran = job_store_read_run(j->live->dir_fd, &j->live->run) >= 0;
        if (ran || j->live->let_go) {
                j->live->have_run = ran;
                j->phase = JOB_PHASE_RUNNING;
                job_notify_new(j);
                job_release(j); /* its end is told when confirmed */
                return;
        }

        int r = may_fall_back ? job_start(j, j->live->next_mechanism) : -EINVAL;
        if (r >= 0)
                return;
        job_discard(j, r, message);
}
