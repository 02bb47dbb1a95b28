/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund's core: the job table, the store, the containment mechanisms and
 * the event loop, with no bus in it. It launches, loads, reaps and ends
 * jobs, and tells the D-Bus face (bus-service.c) what happened through a
 * JobNotifier; the face never changes a job except through this API. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "containment.h"
#include "errors.h"
#include "job-table.h"
#include "job.h"
#include "list.h"
#include "owner.h"

typedef struct ReapCounts {
        unsigned background_kept;
        unsigned released;
        unsigned orphans_killed;
} ReapCounts;

/* What the lifecycle tells the outside. Each is called after the state it
 * reports changed; j stays valid for the call. */
typedef struct JobNotifier {
        /* The job exists for everyone: its command may have run (JobNew). */
        void (*job_new)(void *userdata, Job *j);
        /* It runs inside its containment: Launch may answer. */
        void (*job_running)(void *userdata, Job *j);
        /* Ended from outside, its teardown confirmed: its status and
         * teardown are final (job_teardown_known()), its record not yet. */
        void (*job_confirmed)(void *userdata, Job *j);
        /* Its record is final. */
        void (*job_ended)(void *userdata, Job *j);
        /* It never started and nothing of it ran; it is freed right after.
         * error: BGRUN_ERROR(START_FAILED), -EINVAL (refused as asked) or -errno. */
        void (*job_discarded)(void *userdata, Job *j, int error, const char *message);
        /* Its input can be written now, or it is known that it cannot be
         * (job-input.c: its supervisor answered, or the connection failed). */
        void (*input_ready)(void *userdata, Job *j);
        /* Its output may have grown: it is watched (output-watch.h). */
        void (*output_grew)(void *userdata, Job *j);
        /* The number of starting and running jobs changed. */
        void (*running_jobs_changed)(void *userdata);
        /* j leaves the runtime's table and lists (forgotten), still linked:
         * whoever walks them goes on past it. */
        void (*job_unlisted)(void *userdata, Job *j);
        /* It is about to be freed: nothing may keep it past this call. */
        void (*job_freed)(void *userdata, Job *j);
} JobNotifier;

/* One ended job's record, read once and kept for the property reads and
 * answers that follow its end. */
typedef struct RecordCache {
        char id[JOB_ID_MAX];
        JobSpec spec;
        JobRun run;
        bool have_run;
        JobResult result;
        uint64_t output_bytes;
        uint64_t output_dropped_bytes;
        char *network_denied;   /* its network-denied file's text, NULL: none */
        /* The last running job's network-denied, read for its view
         * (job_view()), which it lasts until the next. */
        char *live_network_denied;
} RecordCache;

struct Runtime {
        sd_event *event;
        BgrunConfig config;
        const char *state_dir;
        const char *supervisor_path;        /* BGRUN_SUPERVISOR_PATH, or a test's */
        /* bgrund --user: the one user it runs as is the only owner and admin;
         * jobs go through that user's systemd manager, in its bgrun.slice. */
        bool user_instance;
        int jobs_fd;
        JobTable jobs;                      /* by id */
        JobTable requests;                  /* those launched with a RequestId, by owner and it */
        QUEUE(Job) all;                     /* every job, oldest first */
        QUEUE(Job) ended;                   /* ended jobs, in the order they ended */
        OwnerTable owners;
        QUEUE(Owner) ready_owners;          /* owners whose queue may start jobs (job-queue.c) */
        sd_event_source *queue_source;      /* starts them, deferred (runtime.c) */
        sd_event_source *retention_timer;   /* for the next record past RetentionSec */
        unsigned n_running;                 /* starting + running */
        ReapCounts reaped;                  /* releases since start */
        Containment containments[_MECHANISM_MAX];
        ContainmentHost containment_host;  /* what the mechanisms are given */
        struct SpawnedChild *children;      /* spawned supervisors not reaped yet */
        struct SupervisorPool *supervisor_pool; /* supervisors started ahead of time */
        uint64_t nofile_soft;               /* RLIMIT_NOFILE as bgrund got it: the commands' */
        RecordCache cache;
        struct OutputWatches *output_watches; /* for WaitOutput (output-watch.c), made at its first use */

        const JobNotifier *notifier;
        void *notifier_data;
};

/* runtime_launch()'s refusals that are not about the caller's input are
 * bgrun's own codes (errors.h): BGRUN_ERROR(NO_CONTAINMENT),
 * TOO_MANY_RUNNING, TOO_MANY_PARALLEL, QUEUE_FULL, KEEP_FREE and
 * OVER_DISK_BUDGET (nothing created), START_FAILED and DEADLINE_PASSED
 * (nothing ran); a job refused at its start is told through job_discarded
 * with those or LIMIT_NOT_ENFORCED, SANDBOX_NOT_AVAILABLE. */

int runtime_new(Runtime **ret, sd_event *event, const char *state_dir, const BgrunConfig *config,
                bool user_instance);
Runtime *runtime_free(Runtime *rt);
DEFINE_TRIVIAL_CLEANUP_FUNC(Runtime *, runtime_free);

void runtime_set_notifier(Runtime *rt, const JobNotifier *notifier, void *userdata);

/* Load every job of the store; keep those whose supervisor verifies and
 * release (kill, confirm, record) the containment of the rest. */
int runtime_load_jobs(Runtime *rt, ReapCounts *ret);

/* The same pass on demand. background_kept counts the live jobs verified
 * now; released and orphans_killed every release since bgrund started,
 * including the pass at start. */
int runtime_reap(Runtime *rt, ReapCounts *ret);

/* Create and start a job from spec (validated already, owner set; its id,
 * mechanism and creation time are filled in here and spec is taken over).
 * On success *ret is STARTING and its outcome comes through the notifier. */
int runtime_launch(Runtime *rt, JobSpec *spec, Job **ret);

Job *runtime_find_job(Runtime *rt, const char *id);

/* The job owner launched with RequestId request_id, while its record is
 * kept (ended ones too); NULL for none. O(1). */
Job *runtime_find_request(Runtime *rt, uid_t owner, const char *request_id);

/* The live job of owner whose containment holds process pid: a job launched
 * from inside it is its child. NULL for none. */
Job *runtime_job_of_process(Runtime *rt, pid_t pid, uid_t owner);

/* For the lifecycle: a job enters or leaves the table, the queues and its
 * owner's counts, or moves to the ended ones. */
int runtime_add_job(Runtime *rt, Job *j);
void runtime_remove_job(Runtime *rt, Job *j);
/* j ended (job_set_state()): it joins the ended ones, for retention. */
void runtime_job_ended(Runtime *rt, Job *j);
/* j starts or stops counting as running (job_set_state(), and the add and
 * remove above): its owner's and bgrund's counts. */
void runtime_count_running(Runtime *rt, Job *j, bool on);
/* What j keeps on disk now, counted against its owner's
 * OutputMaxBytesPerUser= (a running job's record and output as they are
 * written, an ended one's as it ended). */
void runtime_job_charge(Runtime *rt, Job *j, uint64_t bytes);
/* j's supervisor says its output keeps used bytes on disk: charged, and the
 * owner's oldest ended records forgotten past the budget. Returns the bytes
 * the output may keep: SUPERVISOR_DISK_WINDOW more, or used when the owner
 * has no room left. */
uint64_t runtime_job_disk_used(Runtime *rt, Job *j, uint64_t used);
/* Apply the owner's limits on what is kept (MaxRecords,
 * OutputMaxBytesPerUser) and RetentionSec, forgetting the oldest ended
 * records first, never keep. */
void runtime_apply_limits(Runtime *rt, Job *keep);
/* Forget o's oldest ended records, never keep, while it is over MaxRecords
 * or OutputMaxBytesPerUser. */
void runtime_enforce_owner_limits(Runtime *rt, Owner *o, Job *keep);
/* The same for every owner, and RetentionSec (after the store is loaded). */
void runtime_apply_all_limits(Runtime *rt);

/* The mechanism's instance, or NULL when m is not one bgrund knows. */
Containment *runtime_containment(Runtime *rt, Mechanism m);

/* Drop the cached record of id (it changed or is gone). */
/* What an ended job's record reads from its directory (dir_fd) besides its
 * spec, run and result, into c: its output's counts, its network_denied. */
void runtime_cache_read_files(RecordCache *c, int dir_fd);
void runtime_cache_drop(Runtime *rt, const char *id);

/* For the lifecycle: tell the notifier. */
void runtime_notify_running_jobs(Runtime *rt);
