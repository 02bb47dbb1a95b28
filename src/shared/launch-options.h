/* SPDX-License-Identifier: MIT */
#pragma once

/* Launch's options, validated without a bus: the D-Bus face reads each entry
 * of the a{sv} into a LaunchValue and hands it here, so the rules (which
 * keys, which types, which values) live in one place that unit tests and the
 * fuzzer drive directly. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bgrun/launch-options.h"

#define LAUNCH_ENUM(e, n, s) LAUNCH_OPTION_##e,
typedef enum LaunchOption { BGRUN_LAUNCH_OPTIONS(LAUNCH_ENUM) _LAUNCH_OPTION_MAX } LaunchOption;
#undef LAUNCH_ENUM

typedef struct LaunchOptionInfo {
        const char *name;
        const char *signature;
} LaunchOptionInfo;
extern const LaunchOptionInfo launch_options[_LAUNCH_OPTION_MAX];

/* The environment a caller may pass: at most this many entries and bytes. */
#define LAUNCH_ENVIRONMENT_MAX_ENTRIES 1024
#define LAUNCH_ENVIRONMENT_MAX_BYTES (128 * 1024)
#define LAUNCH_USER_NAME_MAX 256
/* How Stop and the wall-clock limit end a job: this signal to every process,
 * this long to exit, then cgroup.kill. */
#define LAUNCH_STOP_SIGNAL_DEFAULT 15 /* SIGTERM */
#define LAUNCH_STOP_GRACE_USEC_DEFAULT (5ULL * 1000000ULL)
#define LAUNCH_STOP_GRACE_USEC_MAX (600ULL * 1000000ULL)

/* A terminal's size: rows and columns each in 1..this. */
#define LAUNCH_TTY_SIZE_MAX 10000

/* Resource limits that map onto the job's cgroup; 0 = not set. */
typedef struct LaunchLimits {
        uint64_t memory_max;
        uint64_t tasks_max;
        uint64_t cpu_quota_per_sec_usec;
} LaunchLimits;

typedef struct LaunchOptions {
        unsigned seen;             /* bit i: option i was given */
        uint64_t max_runtime_usec; /* 0 = none */
        char **environment;        /* NULL-terminated K=V, or NULL */
        LaunchLimits limits;
        char *user;                /* User=, or NULL */
        int stop_signal;           /* 0: the default */
        bool stop_grace_set;
        uint64_t stop_grace_usec;
        bool stdin_pipe;           /* Stdin=pipe */
        bool tty;                  /* Tty=true */
        uint16_t tty_rows, tty_columns; /* 0: not given */
        bool bind_to_caller;       /* BindToCaller=true: stopped when the caller's connection closes */
        bool enforce_limits;       /* EnforceLimits=true: refused where a limit cannot be enforced */
} LaunchOptions;

/* One option's value as read from the bus: signature says which member. */
typedef struct LaunchValue {
        const char *signature; /* "t", "i", "q", "b", "s", "as", or what else the caller sent */
        uint64_t u64;          /* "t", "q", "b"; "i" as the int64_t's bits */
        const char *str;
        char *const *strv;     /* NULL-terminated */
} LaunchValue;

/* Whether key, of the type signature, may be set on o now: its index in
 * launch_options[], or -EINVAL (an unknown key, one given twice, a wrong
 * type; signature NULL: not checked here) with a message for the caller in
 * *ret_error (malloc'd). A reader asks this before it reads the value, so a
 * refused value is never read. */
int launch_options_accept(const LaunchOptions *o, const char *key, const char *signature, char **ret_error);

/* An array option's bounds (entries, bytes counting each string's NUL):
 * -EINVAL for an option that is not an array. A reader stops at the first
 * element past them and answers launch_options_too_large(). */
int launch_options_array_max(int i, size_t *ret_entries, size_t *ret_bytes);
int launch_options_too_large(int i, char **ret_error);

/* Apply key = value to o (launch_options_accept() first). On bad input (an unknown key, one given twice, a
 * wrong type, an out-of-range value) returns -EINVAL with a message for the
 * caller in *ret_error (malloc'd) and leaves o as it was. -ENOMEM otherwise. */
int launch_options_set(LaunchOptions *o, const char *key, const LaunchValue *value, char **ret_error);

/* The rules between options, once all were set: Tty= with Stdin=, a
 * terminal's size without Tty=true. -EINVAL with *ret_error as above. */
int launch_options_check(const LaunchOptions *o, char **ret_error);

void launch_options_done(LaunchOptions *o);
