/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund's state: the bus, the event loop, the job table and each job's
 * lifecycle (starting → running → ended). The D-Bus surface lives in
 * manager.c and job-object.c; containment backends in systemd-unit.c and
 * process-group.c; this file ties them together. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bgrun/bus-api.h"
#include "config.h"
#include "macro.h"
#include "job-record.h"
#include "job-table.h"
#include "pidref.h"

typedef struct Daemon Daemon;
typedef struct Job Job;

typedef enum JobPhase {
        JOB_PHASE_STARTING, /* containment being set up; Launch not answered yet */
        JOB_PHASE_RUNNING,  /* supervisor verified and watched */
        JOB_PHASE_ENDED,    /* result.json final; only a summary stays in memory */
} JobPhase;

/* A pending Wait or Kill call, answered when its job ends (or its timer fires). */
typedef struct Waiter {
        struct Waiter *next;
        Job *job;
        sd_bus_message *message;
        sd_event_source *timer;
        bool is_kill;
} Waiter;

typedef struct ReapCounts {
        unsigned background_kept;
        unsigned released;
        unsigned orphans_killed;
} ReapCounts;

/* Resource limits that map onto unit properties; not part of the record. */
typedef struct LaunchLimits {
        uint64_t memory_max;     /* 0 = not set */
        uint64_t tasks_max;
        uint64_t cpu_quota_per_sec_usec;
} LaunchLimits;

/* What only a starting or running job needs; freed when it ends. */
typedef struct JobLive {
        int dir_fd;
        JobSpec spec;
        JobRun run;
        bool have_run;
        LaunchLimits limits;
        PidRef supervisor;
        sd_event_source *supervisor_source;
        sd_event_source *ready_source;  /* the spawned supervisor's readiness pipe */
        sd_event_source *start_timer;   /* for a supervisor that never reports readiness */
        int spawned_pidfd;              /* the supervisor bgrund spawned, until it is ready */
        int go_fd;                      /* a held supervisor's go pipe (supervisor-spawn.h) */
        bool let_go;                    /* the supervisor may have started the command */
        sd_bus_message *launch;         /* the Launch call to answer */
        Waiter *waiters;
        bool kill_requested;
        sd_event_source *kill_watchdog; /* for a supervisor that does not answer SIGTERM */

        /* Releasing a job whose supervisor is lost. */
        int teardown_cgroup_fd;
        sd_event_source *teardown_source;
        sd_event_source *teardown_timer;
} JobLive;

/* Every job the store holds has one of these; an ended job is just this
 * summary (about a hundred bytes), its record stays on disk. */
struct Job {
        Daemon *daemon;
        Job *table_next;                /* job-table.c's chain */
        char id[JOB_ID_MAX];
        char path[sizeof(BGRUN_JOB_PATH_PREFIX "/") + JOB_ID_LEN]; /* D-Bus object path */
        uid_t owner;
        JobStatus status;
        JobPhase phase;
        uint64_t created_at;            /* orders ListJobs */
        char *session_id;
        JobLive *live;                  /* NULL once ended */
};

struct Daemon {
        sd_event *event;
        sd_bus *bus;
        BgrunConfig config;
        const char *state_dir;
        int jobs_fd;
        JobTable jobs;
        unsigned n_running;            /* starting + running */
        bool systemd_available;
        ReapCounts reaped;             /* releases since start */
        struct PolkitQuery *polkit_queries; /* authorization checks in flight */
        struct SpawnedChild *children;      /* spawned supervisors not reaped yet */
        struct JobListing *listings;        /* ListJobs answers being built */
        uint64_t nofile_soft;               /* RLIMIT_NOFILE as bgrund got it: the commands' */

        /* One-entry cache of an ended job's record, for property reads. */
        char cached_id[JOB_ID_MAX];
        JobSpec cached_spec;
        JobRun cached_run;
        bool cached_have_run;
        JobResult cached_result;
        uint64_t cached_output_bytes;
};

/* A job's full record, borrowed: from memory for live jobs, from disk (via
 * the one-entry cache) for ended ones. Valid until the next daemon call. */
typedef struct JobView {
        const JobSpec *spec;
        const JobRun *run;       /* NULL until the command started */
        const JobResult *result; /* NULL while running */
        JobStatus status;
        uint64_t output_bytes;
} JobView;

int daemon_new(Daemon **ret, const char *state_dir, const BgrunConfig *config);
Daemon *daemon_free(Daemon *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(Daemon *, daemon_free);
int daemon_run(Daemon *d);

/* Load every job of the store; keep those whose supervisor verifies and
 * release (kill, confirm, record) the containment of the rest. */
int daemon_load_jobs(Daemon *d, ReapCounts *ret);

/* The same pass on demand. background_kept counts the live jobs verified now;
 * released and orphans_killed count every release since bgrund started,
 * including the pass at start. */
int daemon_reap(Daemon *d, ReapCounts *ret);

/* Start a job for the Launch call m (validated already); answers m itself. */
int daemon_launch(Daemon *d, sd_bus_message *m, JobSpec *spec, const LaunchLimits *limits, sd_bus_error *error);

int job_view(Job *j, JobView *ret);
/* Answer call with the job's record (a{sv}). */
int job_reply_record(Job *j, sd_bus_message *call);
int job_kill(Job *j, sd_bus_message *m, sd_bus_error *error);
int job_wait(Job *j, sd_bus_message *m, uint64_t timeout_usec, sd_bus_error *error);
int job_forget(Job *j, sd_bus_error *error);
int job_open_output(Job *j, int *ret_fd);
/* An ended job's spec, read from the store. */
int job_read_spec(Job *j, JobSpec *ret);

/* Called by the containment backends. */
void job_started(Job *j);
void job_start_failed(Job *j, const char *message);

