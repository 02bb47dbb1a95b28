/* SPDX-License-Identifier: MIT */
/* The passes over the whole store: loading it when bgrund starts (each
 * live job's supervisor verified, or its containment released), and Reap,
 * which verifies the live ones again on demand. */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "cgroup.h"
#include "job-live.h"
#include "job-id.h"
#include "job-queue.h"
#include "git-placeholders.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "output-store.h"
#include "reaper.h"
#include "runtime.h"
#include "supervisor-process.h"
#include "time-util.h"

/* What ProtectGit left of an ended job (its supervisor died before it
 * removed them): removed by a helper, as its user. */
static void settle_placeholders(Runtime *rt, int dir_fd, const char *id, const JobResult *res) {
        if (!res->dead || !git_placeholders_pending(dir_fd))
                return;
        int r = supervisor_spawn_cleanup(rt, id);
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot remove its placeholders: %m", id);
}

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
                job_set_ended(j, res.status, &res);
                /* When it started, for listings: the result says (a result
                 * from before it did: its run, if it ran). */
                JobRun run = {};
                if (!res.started_at && res.executed && job_store_read_run(dir_fd, &run) >= 0)
                        j->started_at = run.started_at;
                job_run_done(&run);
                (void) job_store_disk_size(dir_fd, &j->disk_size);
                r = job_store_settle_grant(dir_fd, &res);
                if (r < 0)
                        log_warning_errno(r, "Job %s: cannot release its grant: %m", id);
                settle_placeholders(rt, dir_fd, id, &res);
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
        if (!damage && job_store_is_queued(dir_fd)) {
                /* Still queued (job-store.h): nothing of it ran. */
                job_set_state(j, JOB_STATE_QUEUED);
                j->announced = true;
                j->live->dir_fd = TAKE_FD(dir_fd);
                j->live->spec = TAKE_STRUCT(spec);
                (void) job_store_disk_size(j->live->dir_fd, &j->disk_size);
                j->live->record_bytes = j->disk_size;
                *ret = TAKE_PTR(j);
                return 0;
        }
        job_set_state(j, JOB_STATE_RUNNING);
        j->live->dir_fd = TAKE_FD(dir_fd);
        j->live->spec = TAKE_STRUCT(spec);
        /* What it keeps on disk so far; its supervisor says more once
         * connected. */
        uint64_t output = 0;
        (void) job_store_disk_size(j->live->dir_fd, &j->disk_size);
        (void) output_store_disk_size(j->live->dir_fd, &output);
        j->live->record_bytes = j->disk_size - MIN(output, j->disk_size);
        r = job_read_run(j);
        if (r < 0 && r != -ENOENT && !damage) {
                log_warning_errno(r, "Job %s: its run.json is unreadable (%m)", id);
                damage = "run.json";
        }
        j->live->damage = damage;
        /* Ended from outside before bgrund stopped: as its answer said. */
        job_teardown_confirmed(j);
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
        return supervisor_find(j->runtime, j->id, &j->live->supervisor);
}

static void keep(Job *j, ReapCounts *counts) {
        counts->background_kept++;
        /* Killed before bgrund stopped, its record not final yet: the rule
         * for a supervisor that never completes it holds across the restart. */
        if (job_teardown_known(j))
                job_release_unless_ended(j, JOB_SUPERVISOR_PATIENCE_USEC);
}

/* Keep a job that was live when bgrund stopped if its supervisor verifies;
 * else release its containment. */
static void settle_live_job(Job *j, ReapCounts *counts) {
        const JobRun *run = j->live->run;
        int supervisor = run ? pidref_verify(run->supervisor_pid, run->supervisor_token, &j->live->supervisor) : -ENOENT;
        /* A damaged record does not get a live job killed. */
        if (!run && j->live->damage && find_damaged_supervisor(j) > 0) {
                log_info("Job %s: its record is damaged, but its supervisor runs: kept", j->id);
                if (job_watch_supervisor(j) >= 0) {
                        keep(j, counts);
                        return;
                }
        }
        ReapDecision decision = reap_decide(false, run != NULL, supervisor);
        if (decision == REAP_KEEP && job_watch_supervisor(j) >= 0) {
                keep(j, counts);
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
                        /* A queued job's is left of a start that a crash cut short: it ran nothing. */
                        if (j && !job_is_ended(j) && !job_is_queued(j))
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
                if (job_is_supervised(list[i]))
                        settle_live_job(list[i], &counts);
        /* A parent killed or timed out while bgrund was away takes its
         * children with it now. */
        for (size_t i = 0; i < n; i++)
                if (job_is_ended(list[i]) &&
                    (list[i]->status == JOB_KILLED || list[i]->status == JOB_TIMED_OUT))
                        for (Job *child = list[i]->children; child; child = child->sibling_next)
                                if (!job_is_ended(child))
                                        job_kill(child);
        /* Each job belongs to the table now (some may be forgotten below). */

        runtime_apply_all_limits(rt);
        /* Queued jobs start as room allows, in the order they were launched. */
        MapIter it;
        for (Owner *o = owner_first(&rt->owners, &it); o; o = owner_next(&rt->owners, &it))
                if (o->n_queued > 0)
                        queue_wake(rt, o);

        counts.orphans_killed = kill_orphans(rt);
        rt->reaped.orphans_killed += counts.orphans_killed;
        if (ret)
                *ret = counts;
        return 0;
}

int runtime_reap(Runtime *rt, ReapCounts *ret) {
        ReapCounts counts = {};
        JobTableIter it;
        for (Job *j = job_table_first(&rt->jobs, &it), *next; j; j = next) {
                next = job_table_next(&rt->jobs, &it);
                if (job_is_ended(j)) {
                        /* What a cleanup that failed (a path that hung) left. */
                        _cleanup_close_ int dir_fd = -EBADF;
                        JobResult res = {};
                        if (job_store_open_job(rt->jobs_fd, j->id, &dir_fd) >= 0 &&
                            job_store_read_result(dir_fd, &res) >= 0)
                                settle_placeholders(rt, dir_fd, j->id, &res);
                        continue;
                }
                if (!job_is_supervised(j))
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
