/* SPDX-License-Identifier: MIT */
/* What the store keeps (retention): each owner's MaxRecords and
 * OutputMaxBytesPerUser, and RetentionSec, forgetting the oldest ended
 * records first; and each job's bytes on disk charged to its owner as they
 * are written, which those limits count. */

#include "job-log.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "supervisor-protocol.h"
#include "time-util.h"

static void forget(Job *j, const char *why) {
        log_debug("Job %s: forgotten (%s)", j->id, why);
        int r = job_forget(j);
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot forget it (%s): %m", j->id, why);
}

/* The owner's oldest ended job other than keep, or NULL. */
static Job *oldest_ended(Owner *o, Job *keep) {
        for (Job *j = o->jobs.head; j; j = j->owner_next)
                if (job_is_ended(j) && j != keep)
                        return j;
        return NULL;
}

void runtime_enforce_owner_limits(Runtime *rt, Owner *o, Job *keep) {
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
        runtime_enforce_owner_limits(rt, o, j);
        bool room = o->disk_bytes <= l->output_max_bytes_per_user;
        if (!room && !j->live->disk_denied)
                job_log_limit(j->owner, j, "OutputMaxBytesPerUser", l->output_max_bytes_per_user);
        j->live->disk_denied = !room;
        return room ? used + SUPERVISOR_DISK_WINDOW : used;
}

void runtime_apply_limits(Runtime *rt, Job *keep) {
        runtime_enforce_owner_limits(rt, keep->account, keep);
        if (!rt->retention_timer || !sd_event_source_get_enabled(rt->retention_timer, NULL)) {
                int r = enforce_retention(rt);
                if (r < 0)
                        log_warning_errno(r, "Cannot schedule the retention of records: %m");
        }
}

void runtime_apply_all_limits(Runtime *rt) {
        MapIter it;
        for (Owner *o = owner_first(&rt->owners, &it); o; o = owner_next(&rt->owners, &it))
                runtime_enforce_owner_limits(rt, o, NULL);
        int r = enforce_retention(rt);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the retention of records: %m");
}
