/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's errors: the one table of what bgrun answers with an error of its
 * own, for every face. Each condition is a code of bgrun's, never an errno
 * value (a real -ENOSPC from the store is no "KeepFree= reached"), which a
 * function that finds it returns as BGRUN_ERROR(code). Its row says which
 * D-Bus error it is (the error's last word, as the record's "failure" has
 * it; the bus face, src/shared/bus-errors.h, makes the whole name and
 * registers the map with sd-bus), the exit status bgrun gives it (bgrun(1)
 * EXIT STATUS), and what bgrun mcp tells a model about it.
 *
 * The first rows are the D-Bus errors themselves; the rest are bgrund's
 * own conditions, each one of those (its "kind"), told apart so that the
 * answer can say which limit, which mechanism. */

#include <stdbool.h>

/* bgrun's exit status, the one place its numbers are chosen (bgrun(1) EXIT
 * STATUS, bgrun help and the README list them). 0 is success and 2 a usage
 * error, as everywhere; each outcome of bgrun's own has a code of its own in
 * 240-247, out of the way of the statuses a job exits with (run --wait and
 * wait pass those on; 124-143 are timeout(1)'s and a shell's). */
typedef enum BgrunExit {
        BGRUN_EXIT_NO_SUCH_JOB = 240,          /* NoSuchJob */
        BGRUN_EXIT_INVALID_INPUT = 241,        /* InvalidArgs: bgrund turned the input down */
        BGRUN_EXIT_ACCESS_DENIED = 242,        /* AccessDenied */
        BGRUN_EXIT_LIMIT = 243,                /* LimitExceeded, LimitNotEnforced, InputFull */
        BGRUN_EXIT_CONTAINMENT_REFUSED = 244,  /* ContainmentRefused, SandboxNotAvailable */
        BGRUN_EXIT_UNREACHABLE = 245,          /* bgrund not reachable, or not answering within the deadline */
        BGRUN_EXIT_STILL_RUNNING = 246,        /* wait -t: a job still running */
        BGRUN_EXIT_FAILURE = 247,              /* any other failure (JobNotFinished, NoInput, I/O, ...) */
} BgrunExit;

/* The D-Bus errors, each a row: its code; its last word (the record's
 * "failure"); its exit status; what it is, as a line begins with it; and
 * what to do, in bgrun's words and in bgrun mcp's ("" where bgrund's
 * message says it). */
#define BGRUN_ERROR_KINDS(X)                                                                                    \
        X(ACCESS_DENIED,         "AccessDenied",        BGRUN_EXIT_ACCESS_DENIED,        "Access denied",       \
          "",                                                                                                   \
          "")                                                                                                   \
        X(NO_SUCH_JOB,           "NoSuchJob",           BGRUN_EXIT_NO_SUCH_JOB,          "No such job",         \
          "bgrun list shows the jobs there are.",                                                               \
          "It never existed, belongs to someone else, or was forgotten: the list tool shows the jobs there are.") \
        X(CONTAINMENT_REFUSED,   "ContainmentRefused",  BGRUN_EXIT_CONTAINMENT_REFUSED,  "Containment refused", \
          "bgrund runs nothing it cannot contain: bgrun doctor says why.",                                      \
          "bgrund runs nothing it cannot contain: tell the user.")                                              \
        X(JOB_NOT_FINISHED,      "JobNotFinished",      BGRUN_EXIT_FAILURE,              "Still running",       \
          "Kill it or wait for it first.",                                                                      \
          "Stop or kill it first.")                                                                             \
        X(LIMIT_EXCEEDED,        "LimitExceeded",       BGRUN_EXIT_LIMIT,                "Limit exceeded",      \
          "",                                                                                                   \
          "Forget or stop jobs you no longer need, or queue it.")                                               \
        X(NO_INPUT,              "NoInput",             BGRUN_EXIT_FAILURE,              "No input",            \
          "Start a job with --stdin, --open-stdin or --tty to write to it.",                                    \
          "Run a job with stdin true (or tty true) to write to it.")                                            \
        X(INPUT_FULL,            "InputFull",           BGRUN_EXIT_LIMIT,                "Input full",          \
          "Try again once it has read some.",                                                                   \
          "Wait, then write again.")                                                                            \
        X(LIMIT_NOT_ENFORCED,    "LimitNotEnforced",    BGRUN_EXIT_LIMIT,                "Limit not enforced",  \
          "",                                                                                                   \
          "This host cannot enforce that limit: tell the user.")                                                \
        X(DEADLINE_PASSED,       "DeadlinePassed",      BGRUN_EXIT_UNREACHABLE,          "Deadline passed",     \
          "bgrund is slow to start jobs now: give it a longer --call-timeout.",                                 \
          "bgrund is slow to start jobs now: try again later.")                                                 \
        X(SANDBOX_NOT_AVAILABLE, "SandboxNotAvailable", BGRUN_EXIT_CONTAINMENT_REFUSED,  "Sandbox not available", \
          "",                                                                                                   \
          "Tell the user; never run it again with less of a sandbox.")                                          \
        X(INVALID_ARGS,          "InvalidArgs",         BGRUN_EXIT_INVALID_INPUT,        "Invalid argument",    \
          "",                                                                                                   \
          "")

/* bgrund's own conditions, each one of those errors (its kind), told apart
 * so that the answer can name the limit, the mechanism. */
#define BGRUN_ERROR_CONDITIONS(X)                                                                               \
        X(NO_CONTAINMENT,        CONTAINMENT_REFUSED)   /* no mechanism may run it: nothing created */          \
        X(START_FAILED,          CONTAINMENT_REFUSED)   /* every usable one failed: nothing ran */              \
        X(TOO_MANY_RUNNING,      LIMIT_EXCEEDED)        /* the owner's MaxRunningJobs=: nothing created */      \
        X(TOO_MANY_PARALLEL,     LIMIT_EXCEEDED)        /* the session's MaxParallel: nothing created */        \
        X(QUEUE_FULL,            LIMIT_EXCEEDED)        /* the owner's MaxQueuedJobs=: nothing created */       \
        X(KEEP_FREE,             LIMIT_EXCEEDED)        /* the state's file system below KeepFree= */           \
        X(OVER_DISK_BUDGET,      LIMIT_EXCEEDED)        /* the record would pass OutputMaxBytesPerUser= */      \
        X(OVER_LIMIT,            LIMIT_EXCEEDED)        /* a Launch past a [Limits] key (MaxRuntimeSec=) */

#define BGRUN_ERROR_ENUM(code, ...) BGRUN_E_##code,
typedef enum BgrunErrorCode {
        _BGRUN_E_NONE,
        BGRUN_ERROR_KINDS(BGRUN_ERROR_ENUM)
        _BGRUN_E_KINDS_END,
        BGRUN_ERROR_CONDITIONS(BGRUN_ERROR_ENUM)
        _BGRUN_E_MAX
} BgrunErrorCode;
#undef BGRUN_ERROR_ENUM

/* A code as a return value, below every -errno (errno values end at 4095). */
#define BGRUN_ERROR_BASE 0x10000
#define BGRUN_ERROR(code) (-(BGRUN_ERROR_BASE + (int) BGRUN_E_##code))

/* r's code, if r is one of bgrun's (BGRUN_ERROR()), else _BGRUN_E_NONE. */
BgrunErrorCode bgrun_error_code(int r);

/* What a code is: its kind's row (a D-Bus error's). */
typedef struct BgrunErrorInfo {
        BgrunErrorCode kind;    /* its own code */
        const char *word;       /* the D-Bus error's last word; the record's "failure" */
        BgrunExit exit_status;
        const char *what;       /* what it is: a line about it begins with it */
        const char *cli_advice; /* what to do, in bgrun's words ("" when the message says it) */
        const char *mcp_advice; /* the same in bgrun mcp's */
} BgrunErrorInfo;

/* code's kind's row; NULL for no code of the table. */
const BgrunErrorInfo *bgrun_error_info(BgrunErrorCode code);

/* The row whose D-Bus word is word (the last word of an error's name);
 * NULL for none. */
const BgrunErrorInfo *bgrun_error_by_word(const char *word);

/* The line a client tells of an error of info's kind that bgrund said
 * message about: "<what>: <message> <advice>", what said once (not again
 * where message begins with it, or with bgrund's "Request authority
 * denied: "). NULL when out of memory. */
char *bgrun_error_line(const BgrunErrorInfo *info, const char *message, const char *advice);
