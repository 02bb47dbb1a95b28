/* SPDX-License-Identifier: MIT */
#pragma once

/* The job record, in three parts with one writer each, so no two processes
 * ever write the same file:
 *   JobSpec    written by bgrund before anything runs; the supervisor's input
 *   JobRun     written by the supervisor once the command is running
 *   JobResult  written by the supervisor (or, for a lost supervisor, by the
 *              reaper in bgrund) once the job ended and its teardown is known
 * Each part is a small JSON file; every key is type-checked on load.
 *
 * Every record file (spec.json, run.json, result.json, grant.json) carries
 * "format": RECORD_FORMAT. A file without it is format 0, as bgrun wrote
 * them before records were versioned (a supervisor of that version still
 * writes them after an upgrade): read as format 1, whose keys are a superset
 * with defaults. A file of a newer format is refused with -EPROTONOSUPPORT,
 * never guessed at: bgrund then treats it as a damaged record (the job is
 * shown, its supervisor found by name and kept, never killed for it). A
 * format that changes the meaning of a key bumps RECORD_FORMAT. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mechanism.h"
#include "job-id.h"
#include "pidref.h"
#include "strv.h"

/* The record format this build writes and the newest it reads. */
#define RECORD_FORMAT 1U

struct json_object;
/* 0 if the parsed record o is of a format this build reads (none = 0),
 * -EPROTONOSUPPORT if newer, -EBADMSG if "format" is not an integer. */
int record_format_check(struct json_object *o);

typedef enum JobStatus {
        JOB_RUNNING,
        JOB_EXITED,
        JOB_KILLED,
        JOB_TIMED_OUT,
        JOB_FAILED,
        JOB_QUEUED,     /* waiting in its owner's queue (Queue): never in a result */
        _JOB_STATUS_MAX,
} JobStatus;

/* What the job's standard input is (the record's "stdin"). */
typedef enum JobStdin {
        JOB_STDIN_NULL, /* /dev/null */
        JOB_STDIN_PIPE, /* a pipe that WriteInput feeds */
        JOB_STDIN_TTY,  /* a new pseudo-terminal, also its stdout and stderr */
        _JOB_STDIN_MAX,
} JobStdin;

/* "nogroup": what a uid without a user-database entry runs in. */
#define NO_GROUP_GID ((gid_t) 65534)

typedef struct JobSpec {
        char id[JOB_ID_MAX];
        char *session_id;
        char *command;
        char *cwd;
        uid_t owner;       /* the caller's uid, from the bus */
        uid_t uid;         /* who the command runs as */
        gid_t gid;
        gid_t *groups;     /* supplementary groups, gid first; resolved by bgrund */
        size_t n_groups;
        char *user;        /* user name of uid, for HOME/USER/LOGNAME */
        char *home;
        char *shell;
        char **environment; /* NULL-terminated K=V list from the caller */
        uint64_t max_runtime_usec; /* 0 = none */
        uint64_t output_max_bytes; /* OutputMaxBytes= when launched: output kept, head and tail; UINT64_MAX = all */
        uint64_t keep_free;        /* KeepFree= when launched: output is dropped below this much free space */
        Mechanism mechanism;
        char *unit;        /* transient unit name, systemd mechanism only */
        uint64_t created_at;
        char parent[JOB_ID_MAX]; /* the job whose process launched this one, "" if none */
        int stop_signal;          /* Stop and the wall-clock limit: this signal, */
        uint64_t stop_grace_usec; /* this long to exit, then cgroup.kill */
        JobStdin stdin_mode;
        uint16_t tty_rows, tty_columns; /* the terminal's size at start (JOB_STDIN_TTY) */
        /* Resource limits as launched, for the record; 0 = not set. */
        uint64_t memory_max;
        uint64_t tasks_max;
        uint64_t cpu_quota_per_sec_usec;
        bool enforce_limits;      /* refused before exec where a limit has no controller */
        uint64_t launch_deadline_usec; /* CLOCK_REALTIME µs: the command is let run only before it; 0 none */
        bool bind_to_caller;      /* stopped when the connection that launched it closes */
        char *caller;             /* that connection's unique name, with bind_to_caller */
        char *request_id;         /* RequestId: launched at most once per owner and id; NULL none */
        char **argv;              /* Argv: run exactly, no shell (command shows it quoted); NULL: command */
        /* The sandbox (LAUNCH_SANDBOX rows), applied by the command's own process. */
        bool private_network;     /* PrivateNetwork: a network namespace of its own, loopback only */
        bool private_tmp;         /* PrivateTmp: /tmp, /var/tmp and /dev/shm of its own, gone with it */
        unsigned protect_system;  /* ProtectSystem (a ProtectSystem, launch-options.h) */
        unsigned protect_home;    /* ProtectHome (a ProtectHome) */
        char **read_write_paths;  /* ReadWritePaths, ReadOnlyPaths, InaccessiblePaths: as given */
        char **read_only_paths;   /* ('-' first: skipped where missing); NULL: none */
        char **inaccessible_paths;
        bool protect_git;         /* ProtectGit: git's hooks and config out of reach (sandbox-git.c) */
        char **restrict_address_families; /* RestrictAddressFamilies: as given ('~' first: a deny list); NULL: any */
        char **allowed_domains;   /* AllowedDomains: HTTP(S) to these names only, through the job's proxy; NULL: none */
        /* The queue (runtime's job-queue.c) */
        bool queue;               /* Queue: wait for room instead of LimitExceeded */
        uint32_t max_parallel;    /* MaxParallel: of its owner's jobs of its session, at most this many run; 0 none */
} JobSpec;

/* The resource limits a job can be launched with, as bits (a JobRun's
 * limits_unenforced); named as Launch's options. */
typedef enum JobLimit {
        JOB_LIMIT_MEMORY_MAX,
        JOB_LIMIT_TASKS_MAX,
        JOB_LIMIT_CPU_QUOTA,
        _JOB_LIMIT_MAX,
} JobLimit;

const char *job_limit_to_string(JobLimit l);
/* The cgroup controller that enforces l ("memory", "pids", "cpu"). */
const char *job_limit_controller(JobLimit l);
/* Whether spec was launched with l. */
bool job_spec_has_limit(const JobSpec *spec, JobLimit l);

typedef struct JobRun {
        pid_t pid;                          /* the job's main process (/bin/sh) */
        char start_token[PIDREF_TOKEN_MAX];
        pid_t supervisor_pid;
        char supervisor_token[PIDREF_TOKEN_MAX];
        char *cgroup;                       /* the job's payload cgroup, relative to the v2 root */
        uint64_t started_at;
        unsigned limits_unenforced;         /* bits of JobLimit: launched with, no controller to enforce them */
} JobRun;

/* How a job's end was brought about and confirmed (teardown.method). */
typedef enum TeardownMethod {
        TEARDOWN_NONE,          /* "": not ended */
        TEARDOWN_CGROUP_KILL,   /* cgroup.kill, then populated 0 */
        TEARDOWN_PROCESS_TREE,  /* the supervisor killed its descendants (process group mechanism) */
        TEARDOWN_PROCESS_GROUP, /* bgrund killed a lost supervisor's process group */
        TEARDOWN_CGROUP_GONE,   /* the cgroup was removed already: nothing was left */
        TEARDOWN_NOT_STARTED,   /* nothing of the command ran */
        TEARDOWN_SIGNAL,        /* a stop's signal ended it within its grace, confirmed empty */
        TEARDOWN_NEVER_STARTED, /* taken out of its queue (Kill, Stop): nothing of it ever ran */
        _TEARDOWN_METHOD_MAX,
} TeardownMethod;

#define JOB_REASON_MAX 512
#define JOB_FAILURE_MAX 64

/* The contract's defaults of OutputMaxBytes= and KeepFree=: config.c's, and
 * for a spec written before it carried them. */
#define JOB_OUTPUT_MAX_BYTES_DEFAULT (UINT64_C(256) << 20)
#define JOB_KEEP_FREE_DEFAULT (UINT64_C(512) << 20)

typedef struct JobResult {
        JobStatus status;
        int exit_code; /* -1 when ended by a signal or never executed properly */
        int signal;
        bool timed_out;
        bool executed;  /* the command was exec'd */
        bool contained; /* job_contained() of its spec and run, kept for readers of the file */
        uint64_t started_at;  /* its run's start (run.json's), 0 if it never ran; absent from older files */
        uint64_t finished_at;
        bool dead;      /* teardown confirmed: nothing of the job is alive */
        TeardownMethod method;
        uint64_t confirmed_at;
        char reason[JOB_REASON_MAX]; /* for failed: why, for humans */
        char failure[JOB_FAILURE_MAX]; /* for a queued job that failed to start: the error's name, else "" */
        /* The output, as the supervisor relayed it; not known (and not in
         * the file) when bgrund wrote the result for a lost supervisor. */
        bool output_known;
        uint64_t output_bytes;         /* what the job wrote */
        bool output_truncated;         /* some of it was dropped (cap, KeepFree) */
        uint64_t output_dropped_bytes;
        /* What the job used, where it could be measured (the supervisor
         * reads its cgroup before releasing it). */
        bool cpu_usage_known;
        uint64_t cpu_usage_usec;
        bool memory_peak_known;
        uint64_t memory_peak;
} JobResult;

const char *job_status_to_string(JobStatus s);
int job_status_from_string(const char *s);
const char *teardown_method_to_string(TeardownMethod m);
int teardown_method_from_string(const char *s);

/* The one rule for containment.contained: every process the job can create
 * is in a cgroup that can be killed as a whole and confirmed empty. So the
 * mechanism must contain, and the command must have been exec'd (executed)
 * inside its cgroup (run is NULL when it never ran). Whoever writes a result
 * stores this in it; an ended job's is read from there, never recomputed. */
bool job_contained(Mechanism mechanism, bool executed, const JobRun *run);

void job_spec_done(JobSpec *s);
void job_run_done(JobRun *r);

/* Serialise to a malloc'd JSON string. */
int job_spec_to_json(const JobSpec *s, char **ret);
int job_run_to_json(const JobRun *r, char **ret);
int job_result_to_json(const JobResult *r, char **ret);

/* Parse; -EBADMSG on malformed JSON or a key of the wrong type or a missing
 * required key, -EPROTONOSUPPORT on a newer format. Outputs are written only
 * on success. */
int job_spec_from_json(const char *json, JobSpec *ret);
int job_run_from_json(const char *json, JobRun *ret);
int job_result_from_json(const char *json, JobResult *ret);

/* The result shown for an ended job whose result.json cannot be read
 * (error, a -errno): it ended when bgrund could not write it (a full disk),
 * or it was lost since. failed, with that as the reason: a record is never
 * unreadable. */
void job_result_incomplete(JobResult *ret, uint64_t finished_at, int error);
