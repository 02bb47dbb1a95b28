/* SPDX-License-Identifier: MIT */
#pragma once

/* One job's lifecycle in bgrund, with no bus in it. Its life is one
 * JobState, changed only through job_set_state() (job-state.c), which keeps
 * the running counts and the notifications in step with it. An ended job
 * keeps only this small struct in memory; its record stays on disk. What
 * happens is told to the D-Bus face through the runtime's JobNotifier
 * (runtime.h); the face keeps its own pending calls. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "job-record.h"
#include "job-teardown.h"
#include "job-usage.h"
#include "macro.h"
#include "map.h"
#include "pidref.h"

typedef struct Runtime Runtime;
typedef struct Job Job;
typedef struct Owner Owner;

/* A job's life, in the order it goes through it (it may skip states, and a
 * failed start may fall back from LET_GO's attempt to STARTING's next). */
typedef enum JobState {
        JOB_STATE_QUEUED,    /* waiting in its owner's queue (Queue, job-queue.c): nothing of it exists
                              * but its record; Launch was answered */
        JOB_STATE_STARTING,  /* its containment is being set up, its supervisor held: nothing of it
                              * can run; Launch is not answered yet */
        JOB_STATE_LET_GO,    /* its supervisor was let go: the command may run, so a failure is
                              * released, never started again elsewhere */
        JOB_STATE_RUNNING,   /* its supervisor verified and watched (at load: to be verified) */
        JOB_STATE_STOPPING,  /* its supervisor was told to stop it: its signal, its grace, then cgroup.kill */
        JOB_STATE_KILLING,   /* its supervisor was told to kill it, or bgrund kills its payload (job-kill.c) */
        JOB_STATE_CONFIRMED, /* ended from outside, its teardown confirmed in its slot (job-state.c);
                              * its result is to come */
        JOB_STATE_RELEASING, /* its supervisor is lost: bgrund kills and confirms what is left (job-end.c) */
        JOB_STATE_ENDED,     /* result.json final; only this struct stays in memory */
        _JOB_STATE_MAX,
} JobState;

/* What a caller asked of a live job's end; kept until it ends, and told to
 * its supervisor once it has one (a starting job's when it runs). */
typedef enum JobRequest {
        JOB_REQUEST_NONE,
        JOB_REQUEST_STOP, /* Stop: stop_signal, then cgroup.kill after stop_grace_usec */
        JOB_REQUEST_KILL, /* Kill (also after a Stop: at once then) */
} JobRequest;

/* What a start holds (job-start.c): its held supervisor, the attempts'
 * place, and why its supervisor refused it. Released, but for what it
 * says, when the job leaves STARTING and LET_GO (job_set_state()). */
typedef struct JobStart {
        unsigned next_mechanism;        /* where a failed start goes on in config.mechanisms */
        sd_event_source *ready_source;  /* the spawned supervisor's readiness pipe */
        sd_event_source *start_timer;   /* for a supervisor that never reports readiness */
        int spawned_pidfd;              /* the supervisor bgrund spawned, until it is ready */
        pid_t spawned_pid;
        int go_fd;                      /* a held supervisor's go pipe */
        unsigned refused_limits;        /* JobLimit bits it refused the job for (EnforceLimits) */
        char refusal;                   /* what it refused the job for (SUPERVISOR_*_REFUSED), 0 none */
        unsigned char refused_option, refused_errno; /* SUPERVISOR_SANDBOX_REFUSED: which option, and why; */
                                                     /* SUPERVISOR_PATH_REFUSED: which option, which path */
} JobStart;

/* What only a starting or running job needs; freed when it ends. */
typedef struct JobLive {
        int dir_fd;
        JobSpec spec;
        JobRun *run;                    /* run.json, once read: the command was exec'd */
        JobStart start;                 /* while STARTING or LET_GO */
        const char *damage;             /* the part of its record found unreadable at load, or NULL */

        /* Running */
        PidRef supervisor;
        sd_event_source *supervisor_source;
        JobRequest request;             /* Kill or Stop: the job ends killed */
        int stop_signal;
        uint64_t stop_grace_usec;
        sd_event_source *kill_watchdog; /* for a supervisor that does not answer SIGTERM */
        int control_fd;                 /* the supervisor's control socket, once connected (job-input.c) */
        int input_fd;                   /* the input pipe's write end, from it */
        bool input_closed;
        /* Input written while it was queued (job-input.c), being fed to the
         * pipe once it runs: what is left of it, and its end asked for. */
        char *held;
        size_t held_size, held_done;
        bool held_eof;
        sd_event_source *held_source;   /* input_fd's room, while the pipe is full */
        sd_event_source *control_source; /* control_fd's messages: its greeting, then 'U' */
        bool control_greeted;           /* control_fd had its greeting */
        uint64_t record_bytes;          /* its record's files at the start, charged with the output */
        bool disk_denied;               /* its owner's budget was used up at its last report */

        /* Ended from outside, its teardown confirmed and in its slot
         * (JOB_STATE_CONFIRMED): the status and teardown every read shows from
         * now on, before the result completes the record; status
         * JOB_RUNNING until then. A release keeps it. */
        JobTeardown teardown;
        /* bgrund's own kill of the payload, while it waits for it to be
         * empty (job-kill.c): the slot's lock, the cgroup, its watch */
        int kill_lock_fd;
        int kill_cgroup_fd;
        sd_event_source *kill_source;
        sd_event_source *kill_poll;
        uint64_t kill_poll_usec;
        uint64_t kill_deadline;

        /* Released by bgrund itself (JOB_STATE_RELEASING) */
        int teardown_handle;            /* the mechanism's handle on what is left */
        sd_event_source *teardown_source;
        sd_event_source *teardown_timer;
} JobLive;

/* What a listing carries of a command, at most: a bounded answer. */
#define JOB_COMMAND_HEAD_MAX 256

/* Every job the store holds has one; an ended one is just this summary,
 * enough for listings and the per-owner limits without reading the store. */
struct Job {
        Runtime *runtime;
        MapNode id_node;                /* job-table.c's maps: by id, */
        MapNode request_node;           /* and by owner and RequestId */
        Job *all_next, *all_prev;       /* every job, oldest first (listings) */
        Job *owner_next, *owner_prev;   /* its owner's, oldest first */
        Job *ended_next, *ended_prev;   /* ended ones, in the order they ended (retention) */
        Job *queued_next, *queued_prev; /* its owner's queue, while queued (job-queue.c) */
        Job *group_next, *group_prev;   /* its session's live jobs, while live (job-queue.c) */
        struct SessionGroup *group;     /* that session's counts, while live */
        Job *parent;                    /* the job that launched it, while both are known */
        Job *children;                  /* the jobs it launched (Job.sibling_next) */
        Job *sibling_next, *sibling_prev;
        char id[JOB_ID_MAX];
        char parent_id[JOB_ID_MAX];     /* "" if none */
        uid_t owner;
        uint32_t max_parallel;          /* its MaxParallel (0: none), for its session's group (job-queue.c) */
        Owner *account;                 /* its owner's counts, while in the runtime's table */
        JobStatus status;
        JobState state;                 /* job_set_state() alone changes it */
        bool damaged;                   /* its spec was unreadable: the record is rebuilt from its grant */
        bool announced;                 /* JobNew was told: it exists for everyone */
        bool answered_queued;           /* it was QUEUED (job_set_state() sets it): Launch answered it, so a
                                         * failed start ends it failed, with a record */
        uint64_t created_at;            /* orders listings */
        uint64_t started_at;            /* its command's start (run.json), 0 before; for listings */
        uint64_t finished_at;           /* 0 while live */
        int32_t exit_code, signal;      /* the result's, once ended; for listings */
        uint64_t disk_size;             /* the bytes an ended job keeps on disk, its output's (not what
                                         * it wrote) and its record's: what OutputMaxBytesPerUser= counts */
        char *session_id;
        char *command_head;             /* the command cut at JOB_COMMAND_HEAD_MAX bytes */
        char *request_id;               /* its RequestId (at most 128 bytes), NULL for none */
        JobLive *live;                  /* NULL once ended */
        struct CallerBound *caller_bound; /* BindToCaller: its entry in its caller's record (dbus/caller-binding.c) */
        struct OutputWatch *output_watch; /* while a WaitOutput waits on it: output-watch.c's entry */
};

/* A job's full record, borrowed: from memory for live jobs, from disk
 * (through the runtime's one-entry cache) for ended ones. Valid until the
 * next call into the runtime. */
typedef struct JobView {
        const JobSpec *spec;
        const JobRun *run;       /* NULL until the command started */
        const JobResult *result; /* NULL while running */
        JobStatus status;
        uint64_t output_bytes;
        uint64_t output_dropped_bytes; /* what the output's layout says was dropped so far */
        JobUsage usage;          /* live from the cgroup while running, else the result's */
        JobTeardown teardown;    /* the result's, or the slot's once confirmed (status JOB_RUNNING: none) */
        unsigned queue_position; /* a queued job's place in its owner's queue, 1 first; else 0 */
        const char *network_denied; /* with AllowedDomains, what its proxy refused (network-denied.h's text); NULL: none */
} JobView;

/* A job of spec's id, owner, session and command, in no table yet, STARTING. */
Job *job_new(Runtime *rt, const JobSpec *spec);
Job *job_free(Job *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(Job *, job_free);
/* Tell the notifier, once, that j exists for everyone (JobNew). */
void job_announce(Job *j);
/* A live job's BindToCaller ends (its caller's connection is gone for good
 * without it being stopped): it runs on, and its record says it is unbound. */
void job_unbind(Job *j);

int job_view(Job *j, JobView *ret);
/* A stand-in spec for a job whose spec.json is unreadable, from what its
 * grant says (owner, mechanism, unit); UID_INVALID as owner when unknown. */
int job_damaged_spec(int dir_fd, const char *id, JobSpec *ret);
int job_read_spec(Job *j, JobSpec *ret);
/* Read run.json into j->live->run (replacing what it held); < 0 leaves it. */
int job_read_run(Job *j);

/* End the job as a whole (Kill): its supervisor tears it down and its end is
 * told through the notifier; a starting job is told once it runs. */
void job_kill(Job *j);
/* End the job gracefully (Stop): sig to every process of it, grace_usec to
 * exit, then cgroup.kill; told like job_kill(). A Kill after it escalates. */
void job_stop(Job *j, int sig, uint64_t grace_usec);
/* Remove an ended job's record and output, and free it. -EBUSY while it runs. */
int job_forget(Job *j);

/* Release the containment of a job whose supervisor is lost or cannot be
 * verified: kill it, confirm it empty (asynchronously where the mechanism
 * can tell) and record the job as failed (or killed, if a Kill asked). */
void job_release(Job *j);

/* How long a supervisor may take to end a job it was told to kill before
 * bgrund releases the job itself; a healthy one takes milliseconds. */
#define JOB_SUPERVISOR_PATIENCE_USEC (5 * USEC_PER_SEC)
/* The lost-supervisor rule: unless j's supervisor ends it within patience,
 * bgrund releases it (job_release). Each call arms it anew: after a kill,
 * and after a restart that finds a kill answered but the record not final. */
void job_release_unless_ended(Job *j, uint64_t patience);

/* Start the job with the first usable mechanism from config.mechanisms[from]
 * on. < 0 when none could start (BGRUN_ERROR(START_FAILED)), or at once on a
 * failure that is not the mechanism's (nothing ran, nothing was told). */
int job_start(Job *j, unsigned from);

/* Called by a mechanism: the containment is ready, let the supervisor run
 * the command. */
void job_containment_ready(Job *j);
/* Called by a mechanism or job-start.c: starting failed. If nothing
 * can have run, falls back to the next mechanism when may_fall_back (the
 * containment could not be had), else the launch fails (the mechanism
 * refused what it was asked: bad input); if something may have run, its
 * containment is released. */
void job_start_failed(Job *j, bool may_fall_back, const char *message);
/* Called by job-start.c: the supervisor refused the job as bad input
 * (its user cannot enter cwd), ran nothing and is gone. Once nothing of the
 * job is left, it goes as if it never existed (the Launch: error, -EINVAL
 * or BGRUN_ERROR(LIMIT_NOT_ENFORCED), and message); else its containment is released, as for a lost supervisor. */
void job_start_refused(Job *j, int error, const char *message);
/* Called by job-start.c: the command runs and run.json is written. */
void job_started(Job *j);

/* Whether j is starting under mechanism m and waits for its containment. */
bool job_awaits_containment(const Job *j, Mechanism m);

/* The supervisor says it wrote the teardown slot (job-state.c): from the
 * slot, the job's status and teardown are final, and the notifier is told
 * (Kill and Stop answer). Also at load, for a job whose slot was written. */
void job_teardown_confirmed(Job *j);
/* The same for a teardown t that bgrund wrote to the slot itself (job-kill.c). */
void job_confirm(Job *j, const JobTeardown *t);
/* The teardown a Kill answers with: the slot's once confirmed, the result's
 * once ended, else none (status JOB_RUNNING). No usage or output is read. */
int job_view_teardown(Job *j, JobTeardown *ret);
/* Whether j's status and teardown are final though its record is not yet:
 * confirmed, not ended (released after its confirmation too). */
static inline bool job_teardown_known(const Job *j) {
        return j->state != JOB_STATE_ENDED && j->live && j->live->teardown.status != JOB_RUNNING;
}

/* Move j to state s: the one place a job's state changes. Sets the status
 * the state shows, keeps its owner's and bgrund's running counts (a job
 * counts from its add until nothing of it may be alive: confirmed or ended),
 * releases what the state it leaves owned (a start's pipes; at the end, the
 * whole live part) and tells the notifier what the change means: a
 * confirmed teardown, an end. */
void job_set_state(Job *j, JobState s);
/* Its end: status (final) and when, then ENDED. */
void job_set_ended(Job *j, JobStatus status, const JobResult *res);
const char *job_state_to_string(JobState s);

/* The states, as the rest of bgrund asks about them. */
static inline bool job_is_ended(const Job *j) {
        return j->state == JOB_STATE_ENDED;
}
static inline bool job_is_queued(const Job *j) {
        return j->state == JOB_STATE_QUEUED;
}
static inline bool job_is_starting(const Job *j) {
        return j->state >= JOB_STATE_STARTING && j->state <= JOB_STATE_LET_GO;
}
/* Started and not ended: its command ran, or may have. */
static inline bool job_is_running(const Job *j) {
        return j->state >= JOB_STATE_RUNNING && j->state < JOB_STATE_ENDED;
}
/* Its supervisor is watched and ends it (not being released by bgrund). */
static inline bool job_is_supervised(const Job *j) {
        return j->state >= JOB_STATE_RUNNING && j->state <= JOB_STATE_CONFIRMED;
}
/* Something of it may be alive until its teardown is confirmed or it ended:
 * MaxRunningJobs= and RunningJobs count it (a job released after its
 * confirmation has nothing left). */
static inline bool job_counts_running(const Job *j) {
        return (j->state >= JOB_STATE_STARTING && j->state < JOB_STATE_CONFIRMED) ||
               (j->state == JOB_STATE_RELEASING && !job_teardown_known(j));
}

/* Start watching a verified supervisor's exit (runtime.c, at load). */
int job_watch_supervisor(Job *j);
