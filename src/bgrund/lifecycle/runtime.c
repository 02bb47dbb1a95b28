/* SPDX-License-Identifier: MIT */
/* bgrund's core: the job table, the store, the mechanisms, and the passes
 * over all jobs (load at start, Reap). Each job's own lifecycle is job.c.
 * Ended jobs keep only a small summary in memory; their records are read
 * from the store on demand, so memory stays flat as they pile up. */
#include <sys/statvfs.h>
#include <assert.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>

#include "build-config.h"
#include "cgroup.h"
#include "job-id.h"
#include "job-store.h"
#include "output-store.h"
#include "log.h"
#include "macro.h"
#include "reaper.h"
#include "runtime.h"
#include "supervisor-protocol.h"
#include "job-log.h"
#include "time-util.h"

/* The containment host's: what a mechanism says of a job by its id. */
static void containment_unpin_supervisor(void *userdata, const char *job_id) {
        Runtime *rt = userdata;
        rt->supervisor->unpin(rt, job_id);
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

int runtime_new(Runtime **ret, sd_event *event, const char *state_dir, const BgrunConfig *config,
                bool user_instance, const SupervisorOps *supervisor) {
        _cleanup_(runtime_freep) Runtime *rt = calloc(1, sizeof(Runtime));
        if (!rt)
                return -ENOMEM;
        rt->jobs_fd = -EBADF;
        rt->event = sd_event_ref(event);
        rt->state_dir = state_dir;
        rt->supervisor = supervisor;
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
        *ret = TAKE_PTR(rt);
        return 0;
}

Runtime *runtime_free(Runtime *rt) {
        if (!rt)
                return NULL;
        size_t b;
        for (Job *j = job_table_first(&rt->jobs, &b), *next; j; j = next) {
                next = job_table_next(&rt->jobs, &b, j);
                job_free(j);
        }
        job_table_clear(&rt->jobs);
        owner_table_clear(&rt->owners);
        sd_event_source_disable_unref(rt->retention_timer);
        runtime_cache_drop(rt, NULL);
        if (rt->supervisor)
                rt->supervisor->children_free(rt);
        containments_done(rt->containments);
        safe_close(rt->jobs_fd);
        sd_event_unref(rt->event);
        free(rt);
        return NULL;
}

void runtime_set_notifier(Runtime *rt, const JobNotifier *notifier, void *userdata) {
        rt->notifier = notifier;
        rt->notifier_data = userdata;
}

void runtime_notify_running_jobs(Runtime *rt) {
        if (rt->notifier)
                rt->notifier->running_jobs_changed(rt->notifier_data);
}

Job *runtime_find_job(Runtime *rt, const char *id) {
        return job_table_get(&rt->jobs, id);
}

Job *runtime_job_of_process(Runtime *rt, pid_t pid, uid_t owner) {
        _cleanup_free_ char *cgroup = NULL;
        if (cgroup_path_of_pid(pid, &cgroup) < 0)
                return NULL;
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++) {
                Containment *c = runtime_containment(rt, m);
                char id[JOB_ID_MAX];
                if (!c || containment_identify(c, cgroup, id) <= 0)
                        continue;
                Job *j = job_table_get(&rt->jobs, id);
                return j && j->phase != JOB_PHASE_ENDED && j->owner == owner ? j : NULL;
        }
        return NULL;
}

int runtime_add_job(Runtime *rt, Job *j) {
        Owner *o;
        int r = owner_get_or_add(&rt->owners, j->owner, &o);
        if (r >= 0)
                r = job_table_put(&rt->jobs, j);
        if (r < 0)
                return r;
        j->account = o;
        /* A parent is launched before its children, and loaded before them. */
        Job *p = j->parent_id[0] ? job_table_get(&rt->jobs, j->parent_id) : NULL;
        if (p && p->owner == j->owner) {
                j->parent = p;
                LIST_PREPEND_F(sibling, p->children, j);
        }
        QUEUE_APPEND(all, rt->all, j);
        QUEUE_APPEND(owner, o->jobs, j);
        o->records++;
        o->disk_bytes += j->disk_size;
        if (j->phase != JOB_PHASE_ENDED) {
                rt->n_running++;
                o->running++;
        } else
                QUEUE_APPEND(ended, rt->ended, j);
        return 0;
}

void runtime_remove_job(Runtime *rt, Job *j) {
        Owner *o = j->account;
        assert(o);
        (void) job_table_remove(&rt->jobs, j->id);
        if (j->parent)
                LIST_REMOVE_F(sibling, j->parent->children, j);
        for (Job *c = j->children; c; c = c->sibling_next)
                c->parent = NULL;
        j->parent = j->children = NULL;
        QUEUE_REMOVE(all, rt->all, j);
        QUEUE_REMOVE(owner, o->jobs, j);
        o->records--;
        o->disk_bytes -= j->disk_size;
        if (j->phase != JOB_PHASE_ENDED) {
                rt->n_running--;
                o->running--;
        } else
                QUEUE_REMOVE(ended, rt->ended, j);
        runtime_cache_drop(rt, j->id);
        j->account = NULL;
}

/* --- what is kept: MaxRecords, OutputMaxBytesPerUser, RetentionSec ----- */

static void forget(Job *j, const char *why) {
        log_debug("Job %s: forgotten (%s)", j->id, why);
        int r = job_forget(j);
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot forget it (%s): %m", j->id, why);
}

/* The owner's oldest ended job other than keep, or NULL. */
static Job *oldest_ended(Owner *o, Job *keep) {
        for (Job *j = o->jobs.head; j; j = j->owner_next)
                if (j->phase == JOB_PHASE_ENDED && j != keep)
                        return j;
        return NULL;
}

static void enforce_owner_limits(Runtime *rt, Owner *o, Job *keep) {
        const BgrunLimits *l = &rt->config.limits;
        for (Job *j; (o->records > l->max_records || o->disk_bytes > l->output_max_bytes_per_user) &&
                     (j = oldest_ended(o, keep));) {
                bool records = o->records > l->max_records;
                job_log_limit(j->owner, j, records ? "MaxRecords" : "OutputMaxBytesPerUser",
                              records ? l->max_records : l->output_max_bytes_per_user);
                forget(j, records ? "MaxRecords" : "OutputMaxBytesPerUser");
        }
}

static int on_retention_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* Forget what is past RetentionSec and set the timer for the next one. */
static int enforce_retention(Runtime *rt) {
        uint64_t retention = rt->config.limits.retention_usec;
        if (retention == UINT64_MAX)
                return 0;
        uint64_t now = now_realtime_usec();
        while (rt->ended.head && rt->ended.head->finished_at + retention <= now)
                forget(rt->ended.head, "RetentionSec");
        if (!rt->ended.head)
                return 0;

        /* finished_at is realtime, the timer monotonic: a clock step only
         * moves the sweep, which looks at realtime again. */
        uint64_t due = rt->ended.head->finished_at + retention - now;
        if (!rt->retention_timer)
                return sd_event_add_time_relative(rt->event, &rt->retention_timer, CLOCK_MONOTONIC, due,
                                                  USEC_PER_SEC, on_retention_timer, rt);
        int r = sd_event_source_set_time_relative(rt->retention_timer, due);
        return r < 0 ? r : sd_event_source_set_enabled(rt->retention_timer, SD_EVENT_ONESHOT);
}

static int on_retention_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        int r = enforce_retention(userdata);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the retention of records: %m");
        return 0;
}

void runtime_job_ended(Runtime *rt, Job *j) {
        Owner *o = j->account;
        rt->n_running--;
        o->running--;
        QUEUE_APPEND(ended, rt->ended, j);
}

void runtime_job_charge(Runtime *rt, Job *j, uint64_t bytes) {
        if (j->account)
                j->account->disk_bytes += bytes - j->disk_size; /* modulo 2^64: a smaller charge subtracts */
        j->disk_size = bytes;
}

uint64_t runtime_job_disk_used(Runtime *rt, Job *j, uint64_t used) {
        const BgrunLimits *l = &rt->config.limits;
        Owner *o = j->account;
        runtime_job_charge(rt, j, j->live->record_bytes + used);
        /* The owner's oldest ended records go first; its running output
         * only once none is left. */
        enforce_owner_limits(rt, o, j);
        bool room = o->disk_bytes <= l->output_max_bytes_per_user;
        if (!room && !j->live->disk_denied)
                job_log_limit(j->owner, j, "OutputMaxBytesPerUser", l->output_max_bytes_per_user);
        j->live->disk_denied = !room;
        return room ? used + SUPERVISOR_DISK_WINDOW : used;
}

void runtime_apply_limits(Runtime *rt, Job *keep) {
        enforce_owner_limits(rt, keep->account, keep);
        if (!rt->retention_timer || !sd_event_source_get_enabled(rt->retention_timer, NULL)) {
                int r = enforce_retention(rt);
                if (r < 0)
                        log_warning_errno(r, "Cannot schedule the retention of records: %m");
        }
}

Containment *runtime_containment(Runtime *rt, Mechanism m) {
        return (unsigned) m < _MECHANISM_MAX && rt->containments[m].ops ? &rt->containments[m] : NULL;
}

void runtime_cache_drop(Runtime *rt, const char *id) {
        RecordCache *c = &rt->cache;
        if (id && !streq(c->id, id))
                return;
        job_spec_done(&c->spec);
        job_run_done(&c->run);
        *c = (RecordCache) {};
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
        return LAUNCH_OVER_DISK_BUDGET;
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
                return LAUNCH_NO_SPACE;
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
                if (j->phase == JOB_PHASE_ENDED)
                        running -= j->disk_size;
        if (running + size > cap)
                return refuse_over_budget(spec, cap);
        o->disk_bytes += size; /* counted as if written, while the oldest go */
        enforce_owner_limits(rt, o, NULL);
        o->disk_bytes -= size;
        return 0;
}

int runtime_launch(Runtime *rt, JobSpec *spec, const LaunchLimits *limits, Job **ret) {
        int r;

        /* Pick the mechanism before creating anything, so a refusal leaves
         * no trace and the spec is written once. */
        Containment *c = first_usable(rt);
        if (!c) {
                job_log_launch_refused(spec->owner);
                return LAUNCH_NO_CONTAINMENT;
        }

        Owner *o = owner_get(&rt->owners, spec->owner);
        if (o && o->running >= rt->config.limits.max_running_jobs) {
                job_log_limit(spec->owner, NULL, "MaxRunningJobs", rt->config.limits.max_running_jobs);
                return LAUNCH_TOO_MANY_RUNNING;
        }
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
        j->live->limits = *limits;

        r = job_store_create(rt->jobs_fd, spec, &j->live->dir_fd);
        if (r < 0) {
                job_free(j);
                return r;
        }
        j->live->spec = TAKE_STRUCT(*spec);
        /* Its record counts from now on, its output as it is written. */
        (void) job_store_disk_size(j->live->dir_fd, &j->live->record_bytes);
        j->disk_size = j->live->record_bytes;

        r = runtime_add_job(rt, j);
        if (r < 0) {
                (void) job_store_remove(rt->jobs_fd, j->id);
                job_free(j);
                return r;
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
        enforce_owner_limits(rt, j->account, j);
        *ret = j;
        return 0;
}

/* --- loading the store at start, and Reap ------------------------------ */

/* Read one job of the store into a Job, in no table yet. */
static int load_job(Runtime *rt, const char *id, Job **ret) {
        _cleanup_close_ int dir_fd = -EBADF;
        _cleanup_(job_spec_done) JobSpec spec = {};
        JobResult res = {};
        int r;

        r = job_store_open_job(rt->jobs_fd, id, &dir_fd);
        if (r < 0)
                return r;
        /* A damaged record still counts: shown, released if it may hold
         * anything, and forgettable, never silently skipped. */
        const char *damage = NULL;
        r = job_store_read_spec(dir_fd, &spec);
        if (r < 0) {
                log_warning_errno(r, "Job %s: its spec.json is unreadable (%m); rebuilt from its grant", id);
                r = job_damaged_spec(dir_fd, id, &spec);
                if (r < 0)
                        return r;
                damage = "spec.json";
        }

        _cleanup_(job_freep) Job *j = job_new(rt, &spec);
        if (!j)
                return -ENOMEM;
        j->damaged = damage;

        r = job_store_read_result(dir_fd, &res);
        if (r >= 0) {
                j->status = res.status;
                j->phase = JOB_PHASE_ENDED;
                j->finished_at = res.finished_at;
                (void) job_store_disk_size(dir_fd, &j->disk_size);
                r = job_store_settle_grant(dir_fd, &res);
                if (r < 0)
                        log_warning_errno(r, "Job %s: cannot release its grant: %m", id);
                *ret = TAKE_PTR(j);
                return 0;
        }

        if (r != -ENOENT) {
                /* Kept aside for whoever looks into it; the release writes
                 * a result that says what happened. */
                log_warning_errno(r, "Job %s: its result.json is unreadable (%m)", id);
                (void) renameat(dir_fd, JOB_RESULT_FILE, dir_fd, JOB_RESULT_FILE ".damaged");
                damage = "result.json";
        }

        /* No result: the job was live when bgrund stopped. */
        r = job_make_live(j);
        if (r < 0)
                return r;
        j->phase = JOB_PHASE_RUNNING;
        j->status = JOB_RUNNING;
        j->live->dir_fd = TAKE_FD(dir_fd);
        j->live->spec = TAKE_STRUCT(spec);
        /* What it keeps on disk so far; its supervisor says more once
         * connected. */
        uint64_t output = 0;
        (void) job_store_disk_size(j->live->dir_fd, &j->disk_size);
        (void) output_store_disk_size(j->live->dir_fd, &output);
        j->live->record_bytes = j->disk_size - MIN(output, j->disk_size);
        r = job_store_read_run(j->live->dir_fd, &j->live->run);
        j->live->have_run = r >= 0;
        if (r < 0 && r != -ENOENT && !damage) {
                log_warning_errno(r, "Job %s: its run.json is unreadable (%m)", id);
                damage = "run.json";
        }
        j->live->damage = damage;
        *ret = TAKE_PTR(j);
        return 0;
}

/* The running supervisor of a live job whose run.json, which names it, is
 * unreadable: found by where it is (the supervisor/ cgroup of the
 * containment its grant names), or else by what it is (bgrun-supervisor
 * --job ID, bgrund's uid); the first holds when an upgrade replaced the
 * binary it runs. */
static int find_damaged_supervisor(Job *j) {
        Containment *c = runtime_containment(j->runtime, j->live->spec.mechanism);
        _cleanup_free_ char *cgroup = NULL;
        if (containment_job_cgroup(c, j->live->dir_fd, &j->live->spec, &cgroup) >= 0 &&
            containment_find_supervisor(c, cgroup, &j->live->supervisor) > 0)
                return 1;
        return j->runtime->supervisor->find(j->runtime, j->id, &j->live->supervisor);
}

/* Keep a job that was live when bgrund stopped if its supervisor verifies;
 * else release its containment. */
static void settle_live_job(Job *j, ReapCounts *counts) {
        int supervisor = j->live->have_run ? pidref_verify(j->live->run.supervisor_pid, j->live->run.supervisor_token,
                                                           &j->live->supervisor)
                                           : -ENOENT;
        /* A damaged record does not get a live job killed. */
        if (!j->live->have_run && j->live->damage && find_damaged_supervisor(j) > 0) {
                log_info("Job %s: its record is damaged, but its supervisor runs: kept", j->id);
                if (job_watch_supervisor(j) >= 0) {
                        counts->background_kept++;
                        return;
                }
        }
        ReapDecision decision = reap_decide(false, j->live->have_run, supervisor);
        if (decision == REAP_KEEP && job_watch_supervisor(j) >= 0) {
                counts->background_kept++;
                return;
        }
        log_debug("Job %s: %s (supervisor check: %d)", j->id, reap_decision_to_string(decision), supervisor);
        counts->released++;
        job_release(j);
}

static int compare_created(const void *a, const void *b) {
        const Job *x = *(Job *const *) a, *y = *(Job *const *) b;
        if (x->created_at != y->created_at)
                return x->created_at < y->created_at ? -1 : 1;
        return strcmp(x->id, y->id);
}

static int compare_finished(const void *a, const void *b) {
        const Job *x = *(Job *const *) a, *y = *(Job *const *) b;
        if (x->finished_at != y->finished_at)
                return x->finished_at < y->finished_at ? -1 : 1;
        return compare_created(a, b);
}

/* The ended queue in the order the jobs ended, as the store says. */
static int sort_ended(Runtime *rt) {
        size_t n = 0;
        for (Job *j = rt->ended.head; j; j = j->ended_next)
                n++;
        _cleanup_free_ Job **list = calloc(n + 1, sizeof(Job *));
        if (!list)
                return -ENOMEM;
        n = 0;
        while (rt->ended.head) {
                list[n++] = rt->ended.head;
                QUEUE_REMOVE(ended, rt->ended, rt->ended.head);
        }
        if (n > 1)
                qsort(list, n, sizeof(Job *), compare_finished);
        for (size_t i = 0; i < n; i++)
                QUEUE_APPEND(ended, rt->ended, list[i]);
        return 0;
}

/* Containments that no live job accounts for: kill them, without waiting. */
static unsigned kill_orphans(Runtime *rt) {
        unsigned killed = 0;
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++) {
                Containment *c = runtime_containment(rt, m);
                _cleanup_strv_free_ char **ids = NULL, **cgroups = NULL;
                if (!c || containment_list(c, &ids, &cgroups) < 0)
                        continue;
                for (size_t i = 0; ids[i]; i++) {
                        const char *id = ids[i];
                        Job *j = job_table_get(&rt->jobs, id);
                        if (j && j->phase != JOB_PHASE_ENDED)
                                continue;
                        log_info("Killing the orphaned containment of job %s", id);
                        int r = containment_kill_orphan(c, cgroups[i]);
                        if (r >= 0)
                                killed++;
                        else
                                log_warning_errno(r, "Cannot kill the orphaned containment of job %s: %m", id);
                }
        }
        return killed;
}

int runtime_load_jobs(Runtime *rt, ReapCounts *ret) {
        ReapCounts counts = {};
        _cleanup_closedir_ DIR *dir = fdopendir(dup(rt->jobs_fd));
        if (!dir)
                return negative_errno();

        _cleanup_free_ Job **list = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                if (!job_id_is_valid(de->d_name))
                        continue;
                Job *j = NULL;
                int r = load_job(rt, de->d_name, &j);
                if (r == -ENOMEM) {
                        for (size_t k = 0; k < n; k++)
                                job_free(list[k]);
                        return r;
                }
                if (r < 0)
                        continue;
                Job **p = reallocarray(list, n + 1, sizeof(Job *));
                if (!p) {
                        job_free(j);
                        for (size_t k = 0; k < n; k++)
                                job_free(list[k]);
                        return -ENOMEM;
                }
                list = p;
                list[n++] = j;
        }

        /* Into the table and the queues oldest first, then settle the live. */
        if (n > 1) /* an empty store has no list at all */
                qsort(list, n, sizeof(Job *), compare_created);
        for (size_t i = 0; i < n; i++) {
                int r = runtime_add_job(rt, list[i]);
                if (r < 0) {
                        for (size_t k = i; k < n; k++)
                                job_free(list[k]);
                        return r;
                }
        }
        int r = sort_ended(rt);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (list[i]->phase == JOB_PHASE_RUNNING && !list[i]->live->releasing)
                        settle_live_job(list[i], &counts);
        /* A parent killed or timed out while bgrund was away takes its
         * children with it now. */
        for (size_t i = 0; i < n; i++)
                if (list[i]->phase == JOB_PHASE_ENDED &&
                    (list[i]->status == JOB_KILLED || list[i]->status == JOB_TIMED_OUT))
                        for (Job *child = list[i]->children; child; child = child->sibling_next)
                                if (child->phase != JOB_PHASE_ENDED)
                                        job_kill(child);
        /* Each job belongs to the table now (some may be forgotten below). */

        for (size_t b = 0; b < ELEMENTSOF(rt->owners.buckets); b++)
                for (Owner *o = rt->owners.buckets[b]; o; o = o->next)
                        enforce_owner_limits(rt, o, NULL);
        r = enforce_retention(rt);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the retention of records: %m");

        counts.orphans_killed = kill_orphans(rt);
        rt->reaped.orphans_killed += counts.orphans_killed;
        if (ret)
                *ret = counts;
        return 0;
}

int runtime_reap(Runtime *rt, ReapCounts *ret) {
        ReapCounts counts = {};
        size_t b;
        for (Job *j = job_table_first(&rt->jobs, &b), *next; j; j = next) {
                next = job_table_next(&rt->jobs, &b, j);
                if (j->phase != JOB_PHASE_RUNNING || j->live->releasing)
                        continue;
                if (j->live->supervisor.fd >= 0 && pidref_check(&j->live->supervisor) == PIDREF_OWNED) {
                        counts.background_kept++;
                        continue;
                }
                /* Its exit is pending in the event queue, or it was never
                 * verified: release it now. */
                job_release(j);
        }
        rt->reaped.orphans_killed += kill_orphans(rt);
        counts.released = rt->reaped.released;
        counts.orphans_killed = rt->reaped.orphans_killed;
        *ret = counts;
        return 0;
}
