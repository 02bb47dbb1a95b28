/* SPDX-License-Identifier: MIT */
/* bgrund's core: the store, the mechanisms and Launch. The jobs' table and
 * counts are runtime-jobs.c's, the passes over all jobs (load at start,
 * Reap) runtime-load.c's, what is kept runtime-retention.c's, each job's
 * own life job*.c's.
 * Ended jobs keep only a small summary in memory; their records are read
 * from the store on demand, so memory stays flat as they pile up. */
#include <sys/statvfs.h>
#include <assert.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>

#include "build-config.h"
#include "cgroup.h"
#include "job-live.h"
#include "job-id.h"
#include "job-end.h"
#include "job-queue.h"
#include "job-store.h"
#include "output-store.h"
#include "log.h"
#include "macro.h"
#include "reaper.h"
#include "output-watch.h"
#include "runtime.h"
#include "supervisor-protocol.h"
#include "supervisor-process.h"
#include "job-log.h"
#include "time-util.h"

/* The containment host's: what a mechanism says of a job by its id. */
static void containment_unpin_supervisor(void *userdata, const char *job_id) {
        Runtime *rt = userdata;
        supervisor_unpin(rt, job_id);
}

static void containment_ready(void *userdata, const char *job_id, Mechanism m) {
        Job *j = runtime_find_job(userdata, job_id);
        if (j && job_awaits_containment(j, m))
                job_containment_ready(j);
}

static void containment_failed(void *userdata, const char *job_id, Mechanism m, bool may_fall_back, const char *message) {
        Job *j = runtime_find_job(userdata, job_id);
        if (j && job_awaits_containment(j, m))
                job_start_failed(j, may_fall_back, message);
}

/* --- the queue: starting what waits --------------------------------------- */

/* Take the queued j out of its queue and start it; what only the start can
 * tell ends it failed, with a record (it was answered queued). */
static void start_queued_job(Job *j) {
        job_set_state(j, JOB_STATE_STARTING);
        int r = job_start(j, 0);
        if (r < 0)
                job_end_unstarted(j, JOB_FAILED, r, r == BGRUN_ERROR(START_FAILED) ? "no mechanism could start it" : NULL);
}

/* Starts of queued jobs in one turn of the loop, at most: a queue that
 * many may leave (after a restart, or a raised limit) starts over several
 * turns, round the owners, so that other callers are served in between. */
#define QUEUE_STARTS_PER_TURN 16

/* Start what o's queue may start now, oldest first, while *budget lasts (o
 * stays ready for the next turn when it ran out); a session held by its
 * MaxParallel is passed over, not waited for. */
static void start_queued(Runtime *rt, Owner *o, unsigned *budget) {
        queue_unready(rt, o);
        uint64_t max_running = rt->config.limits.max_running_jobs;
        /* next is queued, so live: a start that fails ends only its own job. */
        for (Job *j = o->queued.head, *next; j && o->running < max_running; j = next) {
                next = j->queued_next;
                if (!queue_may_start(rt, j))
                        continue;
                if (*budget == 0) {
                        queue_wake(rt, o);
                        return;
                }
                (*budget)--;
                start_queued_job(j);
        }
}

static int on_queue_ready(sd_event_source *s, void *userdata) {
        Runtime *rt = userdata;
        unsigned budget = QUEUE_STARTS_PER_TURN;
        /* A start that fails at once makes room again, and wakes its owner;
         * an owner whose budget ran out goes to the back. */
        for (Owner *o; budget > 0 && (o = rt->ready_owners.head);)
                start_queued(rt, o, &budget);
        if (rt->ready_owners.head)
                (void) sd_event_source_set_enabled(rt->queue_source, SD_EVENT_ONESHOT);
        return 0;
}

int runtime_new(Runtime **ret, sd_event *event, const char *state_dir, const BgrunConfig *config,
                bool user_instance) {
        _cleanup_(runtime_freep) Runtime *rt = calloc(1, sizeof(Runtime));
        if (!rt)
                return -ENOMEM;
        rt->jobs_fd = -EBADF;
        job_table_init(&rt->jobs, JOB_KEY_ID);
        job_table_init(&rt->requests, JOB_KEY_REQUEST);
        rt->event = sd_event_ref(event);
        rt->state_dir = state_dir;
        rt->supervisor_path = BGRUN_SUPERVISOR_PATH;
        rt->config = *config;
        rt->user_instance = user_instance;

        int r = job_store_open(state_dir, &rt->jobs_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to open the job store in %s: %m", state_dir);

        /* Each running job holds a few descriptors here, and a soft limit of
         * 1024 would cap bgrund near 300 of them. The hard limit is the
         * operator's; supervisors put the soft one back for the command. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0) {
                rt->nofile_soft = rl.rlim_cur;
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        log_warning_errno(negative_errno(), "Cannot raise the soft limit of open files: %m");
        }

        rt->containment_host = (ContainmentHost) {
                .event = rt->event,
                .config = &rt->config,
                .user_instance = rt->user_instance,
                .userdata = rt,
                .unpin = containment_unpin_supervisor,
                .ready = containment_ready,
                .failed = containment_failed,
        };
        r = containments_init(rt->containments, &rt->containment_host);
        if (r < 0)
                return r;
        r = sd_event_add_defer(rt->event, &rt->queue_source, on_queue_ready, rt);
        if (r >= 0)
                r = sd_event_source_set_enabled(rt->queue_source, SD_EVENT_OFF);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rt);
        return 0;
}

Runtime *runtime_free(Runtime *rt) {
        if (!rt)
                return NULL;
        JobTableIter it;
        for (Job *j = job_table_first(&rt->jobs, &it), *next; j; j = next) {
                next = job_table_next(&rt->jobs, &it);
                job_free(j);
        }
        job_table_clear(&rt->jobs);
        job_table_clear(&rt->requests);
        output_watches_free(rt);
        queue_clear(rt);
        owner_table_clear(&rt->owners);
        sd_event_source_disable_unref(rt->retention_timer);
        runtime_cache_drop(rt, NULL);
        free(rt->cache.live_network_denied);
        supervisor_children_free(rt);
        containments_done(rt->containments);
        safe_close(rt->jobs_fd);
        sd_event_unref(rt->event);
        free(rt);
        return NULL;
}

/* The first usable mechanism from config.mechanisms[from] on, or NULL. */
static Containment *first_usable(Runtime *rt) {
        for (unsigned i = 0; i < rt->config.n_mechanisms; i++) {
                Containment *c = runtime_containment(rt, rt->config.mechanisms[i]);
                if (containment_usable(c))
                        return c;
        }
        return NULL;
}

static int refuse_over_budget(const JobSpec *spec, uint64_t cap) {
        job_log_limit(spec->owner, NULL, "OutputMaxBytesPerUser", cap);
        return BGRUN_ERROR(OVER_DISK_BUDGET);
}

/* Room on disk for the job's record: the state's file system above
 * KeepFree=, and the owner's OutputMaxBytesPerUser= (its oldest ended
 * records forgotten first). */
static int check_disk(Runtime *rt, Owner *o, const JobSpec *spec) {
        const BgrunLimits *l = &rt->config.limits;
        struct statvfs sv;
        if (l->keep_free > 0 && fstatvfs(rt->jobs_fd, &sv) >= 0 &&
            (uint64_t) sv.f_bavail * sv.f_frsize < l->keep_free) {
                job_log_limit(spec->owner, NULL, "KeepFree", l->keep_free);
                return BGRUN_ERROR(KEEP_FREE);
        }
        _cleanup_free_ char *json = NULL;
        int r = job_spec_to_json(spec, &json);
        if (r < 0)
                return r;
        uint64_t size = strlen(json), cap = l->output_max_bytes_per_user;
        if (!o || o->disk_bytes + size <= cap)
                return size <= cap ? 0 : refuse_over_budget(spec, cap);
        /* Over: the oldest ended records would go, but only if that makes
         * room, so that a refused Launch forgets nothing. */
        uint64_t running = o->disk_bytes;
        for (Job *j = o->jobs.head; j; j = j->owner_next)
                if (job_is_ended(j))
                        running -= j->disk_size;
        if (running + size > cap)
                return refuse_over_budget(spec, cap);
        o->disk_bytes += size; /* counted as if written, while the oldest go */
        runtime_enforce_owner_limits(rt, o, NULL);
        o->disk_bytes -= size;
        return 0;
}

int runtime_launch(Runtime *rt, JobSpec *spec, Job **ret) {
        int r;

        /* Pick the mechanism before creating anything, so a refusal leaves
         * no trace and the spec is written once. */
        Containment *c = first_usable(rt);
        if (!c) {
                job_log_launch_refused(spec->owner);
                return BGRUN_ERROR(NO_CONTAINMENT);
        }

        Owner *o = owner_get(&rt->owners, spec->owner);
        /* What its owner's queue may start goes first: a new job never
         * passes a queued one that has room (and queues behind those left
         * for the next turn). */
        unsigned budget = QUEUE_STARTS_PER_TURN;
        if (o && queue_is_ready(o))
                start_queued(rt, o, &budget);
        /* A session's MaxParallel, given once, holds for its later
         * launches: one that names none carries it (in its spec, so that
         * it holds across a restart too). */
        SessionGroup *g = queue_session(rt, spec->owner, spec->session_id);
        if (g && g->limit && spec->max_parallel == 0)
                spec->max_parallel = g->limit;
        uint64_t limit = 0;
        int held = queue_check_room(rt, spec, &limit);
        if (held < 0 && !spec->queue) {
                job_log_limit(spec->owner, NULL, held == BGRUN_ERROR(TOO_MANY_RUNNING) ? "MaxRunningJobs" : "MaxParallel", limit);
                return held;
        }
        /* With Queue, never before the session's queued jobs: a limit it
         * raises lets them start first. */
        bool queued = held < 0 || (spec->queue && o && (queue_is_ready(o) || (g && g->queued > 0)));
        if (queued && o->n_queued >= rt->config.limits.max_queued_jobs) {
                job_log_limit(spec->owner, NULL, "MaxQueuedJobs", rt->config.limits.max_queued_jobs);
                return BGRUN_ERROR(QUEUE_FULL);
        }
        /* It bounded Launch's answer, which comes now; a queued job has no
         * start deadline. */
        if (queued)
                spec->launch_deadline_usec = 0;
        r = check_disk(rt, o, spec);
        if (r < 0)
                return r;

        for (int attempt = 0;; attempt++) {
                r = job_id_generate(spec->id);
                if (r < 0)
                        return r;
                if (!job_table_get(&rt->jobs, spec->id))
                        break;
                if (attempt > 16)
                        return -EEXIST;
        }
        _cleanup_free_ char *cgroup = NULL;
        free(spec->unit);
        spec->unit = NULL;
        r = containment_describe(c, spec, &spec->unit, &cgroup);
        if (r < 0)
                return r;
        spec->mechanism = c->ops->mechanism;
        spec->created_at = now_realtime_usec();
        spec->output_max_bytes = rt->config.limits.output_max_bytes;
        spec->keep_free = rt->config.limits.keep_free;

        Job *j = job_new(rt, spec);
        if (!j)
                return -ENOMEM;
        if (job_make_live(j) < 0) {
                job_free(j);
                return -ENOMEM;
        }

        r = job_store_create(rt->jobs_fd, spec, &j->live->dir_fd);
        if (r < 0) {
                job_free(j);
                return r;
        }
        j->live->spec = TAKE_STRUCT(*spec);
        /* Its record counts from now on, its output as it is written. */
        (void) job_store_disk_size(j->live->dir_fd, &j->live->record_bytes);
        j->disk_size = j->live->record_bytes;
        /* Queued: durable before Launch answers, as job-store.h says. */
        if (queued) {
                r = job_store_mark_queued(j->live->dir_fd);
                if (r >= 0)
                        job_set_state(j, JOB_STATE_QUEUED);
        }
        if (r >= 0)
                r = runtime_add_job(rt, j);
        if (r < 0) {
                (void) job_store_remove(rt->jobs_fd, j->id);
                job_free(j);
                return r;
        }
        if (queued) {
                job_announce(j);
                runtime_enforce_owner_limits(rt, j->account, j);
                *ret = j;
                return 0;
        }

        r = job_start(j, 0);
        if (r < 0) {
                /* Nothing ran and nobody heard of it. */
                runtime_remove_job(rt, j);
                (void) job_store_remove(rt->jobs_fd, j->id);
                job_free(j);
                return r;
        }
        runtime_notify_running_jobs(rt);
        runtime_enforce_owner_limits(rt, j->account, j);
        *ret = j;
        return 0;
}
