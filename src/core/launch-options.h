/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's options: the one table of what Launch's a{sv} may carry. Each row
 * says, once, everything the code needs of an option: its D-Bus name and
 * signature, its key in spec.json, the JobSpec field it is kept in (and as
 * which C type), its default, its bounds, whether the record's "limits"
 * shows it, and how the command line writes it. Reading Launch (bgrund's
 * D-Bus face), spec.json both ways (job-record.c), the record's "limits",
 * `bgrun -p` and `bgrun status` all go through it, and so does the interface
 * reference's drift test (tests/integration/clients/docs-drift.py reads the rows).
 * A new option is a row here, and code only where its type is new.
 *
 * The rules are bus-free, so unit tests and the fuzzer drive them directly:
 * the D-Bus face reads each entry of the a{sv} into a LaunchValue and hands
 * it to launch_options_set(). An unknown key is an InvalidArgs error, never
 * ignored. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain-list.h"
#include "job-record.h"

/* How a row's value is kept in the JobSpec (and so how spec.json writes it). */
typedef enum LaunchValueType {
        LAUNCH_VALUE_U64,    /* uint64_t, "t" */
        LAUNCH_VALUE_SIGNAL, /* int, "i": a signal that ends a process */
        LAUNCH_VALUE_U16,    /* uint16_t, "q" */
        LAUNCH_VALUE_U32,    /* uint32_t, "u" */
        LAUNCH_VALUE_BOOL,   /* bool, "b" */
        LAUNCH_VALUE_STRING, /* char *, "s" */
        LAUNCH_VALUE_TOKEN,  /* char *, "s": min..max bytes of [A-Za-z0-9._:@-] */
        LAUNCH_VALUE_ENV,    /* char **, "as": NAME=VALUE entries */
        LAUNCH_VALUE_ARGV,   /* char **, "as": a program (not empty) and its arguments */
        LAUNCH_VALUE_STDIN,  /* JobStdin, "s": "null" or "pipe" (spec.json also "tty") */
        LAUNCH_VALUE_TTY,    /* JobStdin, "b": true makes it JOB_STDIN_TTY */
        LAUNCH_VALUE_CHOICE, /* unsigned, "s": one of the row's words, by its index (0 the default) */
        LAUNCH_VALUE_PATHS,  /* char **, "as": absolute paths, each optional with a leading '-' */
        LAUNCH_VALUE_WORDS,  /* char **, "as": the row's words, the first one's leading '~' making
                              * the list one of what is not allowed (systemd's RestrictAddressFamilies=) */
        LAUNCH_VALUE_DOMAINS, /* char **, "as": host names, *.names and :ports (domain-list.h) */
} LaunchValueType;

/* How the command line writes a value (-p NAME=TEXT) and `bgrun status`
 * shows it; NONE: not a -p property (a flag of its own gives it, if any). */
typedef enum LaunchText {
        LAUNCH_TEXT_NONE,
        LAUNCH_TEXT_DURATION,  /* 90s, 5min, infinity */
        LAUNCH_TEXT_BYTES,     /* 1G, infinity */
        LAUNCH_TEXT_COUNT,     /* 64, infinity */
        LAUNCH_TEXT_CPU_QUOTA, /* 50%, 500ms */
        LAUNCH_TEXT_SIGNAL,    /* TERM, SIGINT, 2 */
        LAUNCH_TEXT_USER,      /* a user name */
        LAUNCH_TEXT_BOOLEAN,   /* yes, no, true, false, 1, 0 */
        LAUNCH_TEXT_WORD,      /* one of the row's words, as it is */
        LAUNCH_TEXT_TOKEN,     /* letters, digits and ._:@- (a RequestId) */
        LAUNCH_TEXT_LIST,      /* words or paths separated by spaces; -p again adds, an empty one empties */
} LaunchText;

/* Row flags. */
#define LAUNCH_LIMIT 1U    /* in the record's "limits" (absent while 0 is its default and value: not set) */
#define LAUNCH_REQUIRED 2U /* always in spec.json, and a spec without it is damaged; else written only when not its default */
#define LAUNCH_SANDBOX 4U  /* a sandbox option: in the record's "sandbox" when not its default, and
                            * compared by RequestId; applied by the command's own process (sandbox-apply.c) */
#define LAUNCH_SANDBOX_MODIFIER 8U /* (with LAUNCH_SANDBOX) qualifies a sandbox, asks for none by itself:
                                    * in every sandboxed job's record, whatever its value */

/* The bounds of a number are min..max; a string's length is at most max
 * bytes and at least min; an array has at most max entries and
 * LAUNCH_ARRAY_MAX_BYTES bytes counting each string's NUL. A value read back
 * from spec.json is its default or within the bounds. Stop's own options
 * (Signal, GraceUSec) are the rows STOP_SIGNAL and STOP_GRACE_USEC. */
#define LAUNCH_ARRAY_MAX_BYTES (128 * 1024)
/* Argv's words, at most (a constant: the supervisor's child sizes its stack by it). */
#define LAUNCH_ARGV_MAX_WORDS 8192
/* A RequestId's bytes, at most (a constant: callers keep one in a buffer). */
#define LAUNCH_REQUEST_ID_MAX 128
/* The paths of one of ReadWritePaths, ReadOnlyPaths, InaccessiblePaths, at
 * most (a constant: the supervisor's child keeps a descriptor for each on
 * its stack), and the bytes of one. */
#define LAUNCH_PATHS_MAX 64
#define LAUNCH_PATH_MAX_BYTES 4095

/* ProtectSystem's and ProtectHome's words, as systemd.exec(5) has them. */
typedef enum ProtectSystem {
        PROTECT_SYSTEM_NO,
        PROTECT_SYSTEM_YES,    /* /usr, /boot, /efi read-only */
        PROTECT_SYSTEM_FULL,   /* and /etc */
        PROTECT_SYSTEM_STRICT, /* everything but /dev, /proc, /sys and ReadWritePaths */
        _PROTECT_SYSTEM_MAX,
} ProtectSystem;

typedef enum ProtectHome {
        PROTECT_HOME_NO,
        PROTECT_HOME_YES,       /* /home, /root, /run/user inaccessible and empty */
        PROTECT_HOME_READ_ONLY, /* read-only */
        PROTECT_HOME_TMPFS,     /* each an empty tmpfs of the job's own, writable by its user */
        _PROTECT_HOME_MAX,
} ProtectHome;

extern const char *const protect_system_words[];
extern const char *const protect_home_words[];
/* RestrictAddressFamilies' words, as systemd.exec(5) has them. */
extern const char *const address_family_words[];

/* Mounts as systemd makes them (namespace.c): read-only mounts stop chmod,
 * chown and xattrs too, which Landlock alone does not. */
#define LAUNCH_MOUNTS "mount-namespace"

#define LAUNCH_OPTION_TABLE(X)                                                                                  \
        /* enum suffix             D-Bus name             sig   spec.json key           JobSpec field           \
         *                         type    default           min  max                     flags                 \
         *                         -p text   words (a CHOICE row's, by index, NULL-terminated)                  \
         *                         the mechanism that enforces a sandbox row (the record's sandbox.mechanisms) */ \
        X(MAX_RUNTIME_USEC,      "MaxRuntimeUSec",     "t",  "max_runtime_usec",     max_runtime_usec,          \
          U64,    0,                1,   UINT64_MAX,             LAUNCH_LIMIT | LAUNCH_REQUIRED,                \
          DURATION, NULL, NULL)                                                                                 \
        X(ENVIRONMENT,           "Environment",        "as", "environment",          environment,               \
          ENV,    0,                0,   1024,                   LAUNCH_REQUIRED,                               \
          NONE,     NULL, NULL)                                                                                 \
        X(MEMORY_MAX,            "MemoryMax",          "t",  "memory_max",           memory_max,                \
          U64,    0,                1,   UINT64_MAX,             LAUNCH_LIMIT,                                  \
          BYTES,    NULL, NULL)                                                                                 \
        X(TASKS_MAX,             "TasksMax",           "t",  "tasks_max",            tasks_max,                 \
          U64,    0,                1,   UINT64_MAX,             LAUNCH_LIMIT,                                  \
          COUNT,    NULL, NULL)                                                                                 \
        X(CPU_QUOTA_PER_SEC_USEC, "CPUQuotaPerSecUSec", "t",  "cpu_quota_per_sec_usec", cpu_quota_per_sec_usec, \
          U64,    0,                1,   UINT64_MAX,             LAUNCH_LIMIT,                                  \
          CPU_QUOTA, NULL, NULL)                                                                                \
        X(USER,                  "User",               "s",  "user",                 user,                      \
          STRING, 0,                1,   256,                    LAUNCH_REQUIRED,                               \
          USER,     NULL, NULL)                                                                                 \
        X(STOP_SIGNAL,           "StopSignal",         "i",  "stop_signal",          stop_signal,               \
          SIGNAL, 15 /* TERM */,    1,   64,                     LAUNCH_LIMIT,                                  \
          SIGNAL,   NULL, NULL)                                                                                 \
        X(STOP_GRACE_USEC,       "StopGraceUSec",      "t",  "stop_grace_usec",      stop_grace_usec,           \
          U64,    5000000 /* 5 s */, 0,   600000000 /* 10 min */, LAUNCH_LIMIT,                                 \
          DURATION, NULL, NULL)                                                                                 \
        X(STDIN,                 "Stdin",              "s",  "stdin",                stdin_mode,                \
          STDIN,  JOB_STDIN_NULL,   0,   0,                      0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(TTY,                   "Tty",                "b",  NULL,                   stdin_mode,                \
          TTY,    JOB_STDIN_NULL,   0,   0,                      0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(TTY_ROWS,              "TtyRows",            "q",  "tty_rows",             tty_rows,                  \
          U16,    24,               1,   10000,                  0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(TTY_COLUMNS,           "TtyColumns",         "q",  "tty_columns",          tty_columns,               \
          U16,    80,               1,   10000,                  0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(BIND_TO_CALLER,        "BindToCaller",       "b",  "bind_to_caller",       bind_to_caller,            \
          BOOL,   0,                0,   1,                      0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(ENFORCE_LIMITS,        "EnforceLimits",      "b",  "enforce_limits",       enforce_limits,            \
          BOOL,   0,                0,   1,                      0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(LAUNCH_DEADLINE_USEC,  "LaunchDeadlineUSec", "t",  "launch_deadline_usec", launch_deadline_usec,      \
          U64,    0,                1,   UINT64_MAX,             0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(REQUEST_ID,            "RequestId",          "s",  "request_id",           request_id,                \
          TOKEN,  0,                1,   LAUNCH_REQUEST_ID_MAX,  0,                                             \
          TOKEN,    NULL, NULL)                                                                                 \
        X(ARGV,                  "Argv",               "as", "argv",                 argv,                      \
          ARGV,   0,                1,   LAUNCH_ARGV_MAX_WORDS,  0,                                             \
          NONE,     NULL, NULL)                                                                                 \
        X(PRIVATE_NETWORK,       "PrivateNetwork",     "b",  "private_network",      private_network,           \
          BOOL,   0,                0,   1,                      LAUNCH_SANDBOX,                                \
          BOOLEAN,  NULL, "network-namespace")                                                                  \
        X(PRIVATE_TMP,           "PrivateTmp",         "b",  "private_tmp",          private_tmp,               \
          BOOL,   0,                0,   1,                      LAUNCH_SANDBOX,                                \
          BOOLEAN,  NULL, LAUNCH_MOUNTS)                                                                        \
        X(PROTECT_SYSTEM,        "ProtectSystem",      "s",  "protect_system",       protect_system,            \
          CHOICE, PROTECT_SYSTEM_NO, 0,   _PROTECT_SYSTEM_MAX - 1, LAUNCH_SANDBOX,                              \
          WORD,     protect_system_words, LAUNCH_MOUNTS)                                                        \
        X(PROTECT_HOME,          "ProtectHome",        "s",  "protect_home",         protect_home,              \
          CHOICE, PROTECT_HOME_NO,  0,   _PROTECT_HOME_MAX - 1,  LAUNCH_SANDBOX,                                \
          WORD,     protect_home_words, LAUNCH_MOUNTS)                                                          \
        X(READ_WRITE_PATHS,      "ReadWritePaths",     "as", "read_write_paths",     read_write_paths,          \
          PATHS,  0,                1,   LAUNCH_PATHS_MAX,       LAUNCH_SANDBOX,                                \
          LIST,     NULL, LAUNCH_MOUNTS)                                                                        \
        X(READ_ONLY_PATHS,       "ReadOnlyPaths",      "as", "read_only_paths",      read_only_paths,           \
          PATHS,  0,                1,   LAUNCH_PATHS_MAX,       LAUNCH_SANDBOX,                                \
          LIST,     NULL, LAUNCH_MOUNTS)                                                                        \
        X(INACCESSIBLE_PATHS,    "InaccessiblePaths",  "as", "inaccessible_paths",   inaccessible_paths,        \
          PATHS,  0,                1,   LAUNCH_PATHS_MAX,       LAUNCH_SANDBOX,                                \
          LIST,     NULL, LAUNCH_MOUNTS)                                                                        \
        X(PROTECT_GIT,           "ProtectGit",         "b",  "protect_git",          protect_git,               \
          BOOL,   1,                0,   1,                      LAUNCH_SANDBOX | LAUNCH_SANDBOX_MODIFIER,      \
          BOOLEAN,  NULL, LAUNCH_MOUNTS)                                                                        \
        X(RESTRICT_ADDRESS_FAMILIES, "RestrictAddressFamilies", "as", "restrict_address_families",              \
          restrict_address_families,                                                                            \
          WORDS,  0,                1,   16,                     LAUNCH_SANDBOX,                                \
          LIST,     address_family_words, "seccomp")                                                            \
        X(ALLOWED_DOMAINS,       "AllowedDomains",     "as", "allowed_domains",      allowed_domains,           \
          DOMAINS, 0,               1,   DOMAIN_LIST_MAX,        LAUNCH_SANDBOX,                                \
          LIST,     NULL, "http-proxy")                                                                         \
        X(QUEUE,                 "Queue",              "b",  "queue",                queue,                     \
          BOOL,   0,                0,   1,                      0,                                             \
          BOOLEAN,  NULL, NULL)                                                                                 \
        X(MAX_PARALLEL,          "MaxParallel",        "u",  "max_parallel",         max_parallel,              \
          U32,    0,                1,   UINT32_MAX,             0,                                             \
          COUNT,    NULL, NULL)

#define LAUNCH_ENUM(e, ...) LAUNCH_OPTION_##e,
typedef enum LaunchOption { LAUNCH_OPTION_TABLE(LAUNCH_ENUM) _LAUNCH_OPTION_MAX } LaunchOption;
#undef LAUNCH_ENUM

/* A set of options, a bit each (which were given, which a client sets). */
typedef uint64_t LaunchOptionSet;
#define LAUNCH_OPTION_BIT(i) (UINT64_C(1) << (i))
_Static_assert(_LAUNCH_OPTION_MAX <= 64, "a LaunchOptionSet holds 64 options");

typedef struct LaunchOptionInfo {
        const char *name;      /* Launch's key */
        const char *signature; /* its D-Bus type */
        const char *json_key;  /* in spec.json; NULL: kept by another row's key (Tty in "stdin") */
        size_t offset;         /* of its field in JobSpec */
        LaunchValueType type;
        uint64_t default_value;
        uint64_t min, max;
        unsigned flags;
        LaunchText text;
        const char *const *words; /* CHOICE: its words by index, NULL-terminated */
        const char *mechanism;    /* a sandbox row's enforcer, as sandbox.mechanisms names it */
} LaunchOptionInfo;
extern const LaunchOptionInfo launch_options[_LAUNCH_OPTION_MAX];

/* The option named name (Launch's key), or NULL. */
const LaunchOptionInfo *launch_option_by_name(const char *name);

/* A terminal's size: rows and columns each in 1..this (ResizeTerminal too). */
#define LAUNCH_TTY_SIZE_MAX ((unsigned) launch_options[LAUNCH_OPTION_TTY_ROWS].max)
#define LAUNCH_ENVIRONMENT_MAX_ENTRIES ((size_t) launch_options[LAUNCH_OPTION_ENVIRONMENT].max)
#define LAUNCH_USER_NAME_MAX ((size_t) launch_options[LAUNCH_OPTION_USER].max)

/* Option i's word for value v (a CHOICE row), or NULL. */
const char *launch_option_word(LaunchOption i, unsigned v);

/* RestrictAddressFamilies' words l (valid ones) as AF_* bits, and whether
 * they are what may not be made. -EINVAL for a word it does not know. */
int launch_address_families(char *const *l, bool *ret_deny, uint32_t *ret_families);

/* Whether p may be one of a path option's values: absolute (after an
 * optional '-'), no "." or ".." component, at most LAUNCH_PATH_MAX_BYTES. */
bool launch_path_valid(const char *p);

/* Whether s is a RequestId: 1..LAUNCH_REQUEST_ID_MAX bytes of [A-Za-z0-9._:@-]. */
bool launch_request_id_is_valid(const char *s);

/* What the job's standard input is, as spec.json and the record name it. */
const char *job_stdin_to_string(JobStdin s);
int job_stdin_from_string(const char *s);

/* Every option of s at its default (the rest of s as it was). */
void launch_options_defaults(JobSpec *s);

/* Launch's options as they are read: the spec they build, with every option
 * not given at its default. */
typedef struct LaunchOptions {
        LaunchOptionSet seen; /* option i was given */
        JobSpec spec;  /* the options' fields (launch_options_init() first) */
} LaunchOptions;

void launch_options_init(LaunchOptions *o);
void launch_options_done(LaunchOptions *o);
/* Free the options' fields of s (its strings and lists), leaving them NULL:
 * job_spec_done() frees a spec's options through this. */
void launch_options_free_fields(JobSpec *s);
static inline bool launch_options_given(const LaunchOptions *o, LaunchOption i) {
        return o->seen & LAUNCH_OPTION_BIT(i);
}

/* One option's value as read from the bus: signature says which member. */
typedef struct LaunchValue {
        const char *signature; /* "t", "i", "q", "b", "s", "as", or what else the caller sent */
        uint64_t u64;          /* "t", "q", "b"; "i" as the int64_t's bits */
        const char *str;
        char *const *strv;     /* NULL-terminated */
} LaunchValue;

/* Option i's value in s, as it goes on the bus (strings point into s). */
LaunchValue launch_option_get(LaunchOption i, const JobSpec *s);

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

/* Apply key = value to o (launch_options_accept() first). On bad input (an
 * unknown key, one given twice, a wrong type, an out-of-range value) returns
 * -EINVAL with a message for the caller in *ret_error (malloc'd) and leaves
 * o as it was. -ENOMEM otherwise. */
int launch_options_set(LaunchOptions *o, const char *key, const LaunchValue *value, char **ret_error);

/* Whether option i of s is not at its default (a string or list: given). */
bool launch_option_is_set(LaunchOption i, const JobSpec *s);
/* What enforces sandbox option i (a LAUNCH_SANDBOX row), as the record's
 * sandbox.mechanisms names it. */
const char *launch_sandbox_mechanism(LaunchOption i);
/* Whether a and b ask for the same sandbox (RequestId's comparison). */
bool launch_options_same_sandbox(const JobSpec *a, const JobSpec *b);

/* The rules between options, once all were set: Tty= with Stdin=, a
 * terminal's size without Tty=true. -EINVAL with *ret_error as above. */
int launch_options_check(const LaunchOptions *o, char **ret_error);

struct json_object;
/* spec.json's keys of the options in s, by the table (job-record.c). */
int launch_options_to_json(const JobSpec *s, struct json_object *o);
/* Read them back into s (defaults for keys not there): -EBADMSG for a
 * required key missing, one of the wrong type, or a value neither its
 * default nor within bounds. */
int launch_options_from_json(struct json_object *o, JobSpec *s);
