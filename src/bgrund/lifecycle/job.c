/* SPDX-License-Identifier: MIT */
/* A job as bgrund holds it: the struct, its live part, reading its record
 * (from memory while live, from the store once ended), and forgetting it.
 * Its life is the other job*.c files': its start (job-start.c), its end
 * (job-end.c), its state (job-state.c). No bus here. */
#include <assert.h>
#include <stdio.h>

#include "grant.h"
#include "job-store.h"
#include "job.h"
#include "job-input.h"
#include "job-kill.h"
#include "job-queue.h"
#include "job-private.h"
#include "log.h"
#include "network-denied.h"
#include "macro.h"
#include "output-watch.h"
#include "runtime.h"
#include "utf8.h"

/* --- the struct -------------------------------------------------------- */

Job *job_new(Runtime *rt, const JobSpec *spec) {
        _cleanup_free_ Job *j = calloc(1, sizeof(Job));
        if (!j)
                return NULL;
        *j = (Job) { .runtime = rt, .owner = spec->owner, .created_at = spec->created_at, .state = JOB_STATE_STARTING,
                     .exit_code = -1,
                     .max_parallel = spec->max_parallel };
        strcpy(j->id, spec->id);
        strcpy(j->parent_id, spec->parent);
        j->session_id = strdup(spec->session_id);
        j->command_head = utf8_strndup(spec->command, JOB_COMMAND_HEAD_MAX);
        j->request_id = spec->request_id ? strdup(spec->request_id) : NULL;
        if (!j->session_id || !j->command_head || (spec->request_id && !j->request_id)) {
                free(j->session_id);
                free(j->command_head);
                free(j->request_id);
                return NULL;
        }
        return TAKE_PTR(j);
}

void job_unbind(Job *j) {
        JobSpec *spec = &j->live->spec;
        if (!spec->bind_to_caller && !spec->caller)
                return;
        spec->bind_to_caller = false;
        free(TAKE_PTR(spec->caller));
        int r = job_store_write_spec(j->live->dir_fd, spec);
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot record that its binding ended: %m", j->id);
}

void job_announce(Job *j) {
        Runtime *rt = j->runtime;
        if (j->announced)
                return;
        j->announced = true;
        if (rt->notifier)
                rt->notifier->job_new(rt->notifier_data, j);
}

Job *job_free(Job *j) {
        if (!j)
                return NULL;
        Runtime *rt = j->runtime;
        if (rt && rt->notifier && rt->notifier->job_freed)
                rt->notifier->job_freed(rt->notifier_data, j);
        job_release_live_state(j);
        if (rt)
                output_watch_drop(rt, j);
        free(j->session_id);
        free(j->command_head);
        free(j->request_id);
        free(j);
        return NULL;
}

int job_read_run(Job *j) {
        JobLive *l = j->live;
        _cleanup_free_ JobRun *run = calloc(1, sizeof(JobRun));
        if (!run)
                return -ENOMEM;
        int r = job_store_read_run(l->dir_fd, run);
        if (r < 0)
                return r;
        if (l->run)
                job_run_done(l->run);
        free(l->run);
        l->run = TAKE_PTR(run);
        j->started_at = l->run->started_at;
        return 0;
}

/* --- reading ----------------------------------------------------------- */

int job_view(Job *j, JobView *ret) {
        Runtime *rt = j->runtime;
        RecordCache *cache = &rt->cache;

        if (!job_is_ended(j)) {
                /* Once confirmed, the slot's status and teardown (JOB_RUNNING
                 * and none before); the end's own fields read as while it
                 * ran until the result. */
                const JobRun *run = j->live->run;
                *ret = (JobView) {
                        .spec = &j->live->spec,
                        .run = run,
                        .status = job_is_queued(j) ? JOB_QUEUED : j->live->teardown.status,
                        .teardown = j->live->teardown,
                        .queue_position = queue_position(j),
                };
                (void) job_store_output_counts(j->live->dir_fd, &ret->output_bytes, &ret->output_dropped_bytes);
                /* Read now, so a figure is never older than the call. */
                if (run && run->cgroup && run->cgroup[0])
                        (void) job_usage_read_cgroup_path(run->cgroup, &ret->usage);
                if (j->live->spec.allowed_domains) {
                        free(cache->live_network_denied);
                        cache->live_network_denied = NULL;
                        (void) network_denied_read(j->live->dir_fd, &cache->live_network_denied);
                        ret->network_denied = cache->live_network_denied;
                }
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
                runtime_cache_read_files(cache, dir_fd);
                strcpy(cache->id, j->id);
        }

        *ret = (JobView) {
                .spec = &cache->spec,
                .run = cache->have_run ? &cache->run : NULL,
                .result = &cache->result,
                .status = cache->result.status,
                .output_bytes = cache->output_bytes,
                .output_dropped_bytes = cache->output_dropped_bytes,
                .network_denied = cache->network_denied,
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

int job_view_teardown(Job *j, JobTeardown *ret) {
        if (!job_is_ended(j)) {
                *ret = j->live->teardown;
                return 0;
        }
        JobView v;
        int r = job_view(j, &v);
        if (r >= 0)
                *ret = v.teardown;
        return r;
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

int job_forget(Job *j) {
        Runtime *rt = j->runtime;
        if (!job_is_ended(j))
                return -EBUSY;
        int r = job_store_remove(rt->jobs_fd, j->id);
        if (r < 0)
                return r;
        runtime_remove_job(rt, j);
        job_free(j);
        return 0;
}
