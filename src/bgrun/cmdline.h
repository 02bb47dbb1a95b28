/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's command line: the options, the verb they go with, and the checks
 * between the two. No bus here: parse_argv() is tested on its own. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

#include "connection.h"
#include "launch-text.h"

#define EXIT_USAGE 2

/* Options a verb's code asks about by name (bits of a uint64_t: more than
 * 32 options); options.c's table says which verbs take each. An option
 * that only gives a Launch option has none: its value is in launch. */
typedef uint64_t OptionFlag;
#define OPTION_SESSION      (UINT64_C(1) << 0)
#define OPTION_DIRECTORY    (UINT64_C(1) << 1)
#define OPTION_TIMEOUT      (UINT64_C(1) << 2)
#define OPTION_SETENV       (UINT64_C(1) << 3)
#define OPTION_PROPERTY     (UINT64_C(1) << 4)
#define OPTION_WAIT         (UINT64_C(1) << 5)
#define OPTION_JSON         (UINT64_C(1) << 6)
#define OPTION_FOLLOW       (UINT64_C(1) << 7)
#define OPTION_QUIET        (UINT64_C(1) << 8)
#define OPTION_CLEAN_ENV    (UINT64_C(1) << 9)
#define OPTION_STDIN        (UINT64_C(1) << 10)
#define OPTION_TTY          (UINT64_C(1) << 11)
#define OPTION_SIGNAL       (UINT64_C(1) << 12)
#define OPTION_GRACE        (UINT64_C(1) << 13)
#define OPTION_ANY          (UINT64_C(1) << 14)
#define OPTION_ENDED        (UINT64_C(1) << 15)
#define OPTION_OLDER_THAN   (UINT64_C(1) << 16)
#define OPTION_LINES        (UINT64_C(1) << 17)  /* logs -n LINES */
#define OPTION_NO_NEWLINE   (UINT64_C(1) << 18)  /* send -n */
#define OPTION_EOF          (UINT64_C(1) << 19)
#define OPTION_STRICT_LIMITS (UINT64_C(1) << 20) /* run --strict-limits */
#define OPTION_OFFSET       (UINT64_C(1) << 21)  /* logs --offset N */
#define OPTION_PLAIN        (UINT64_C(1) << 22)  /* logs --plain */
#define OPTION_OPEN_STDIN   (UINT64_C(1) << 23)  /* run --open-stdin */
#define OPTION_STATUS       (UINT64_C(1) << 24)  /* list --status STATUS */
#define OPTION_ENV_ALLOW    (UINT64_C(1) << 25)  /* run --env-allow NAME */
#define OPTION_KEEP_JOBS    (UINT64_C(1) << 26)  /* mcp */
#define OPTION_OUTPUT_LIMIT (UINT64_C(1) << 27)  /* mcp */
#define OPTION_SANDBOX      (UINT64_C(1) << 29)  /* run, mcp --sandbox PROFILE */
#define OPTION_NETWORK      (UINT64_C(1) << 30)  /* run, mcp --network */
#define OPTION_NO_NETWORK   (UINT64_C(1) << 31)  /* run --no-network */
#define OPTION_WORKSPACE    (UINT64_C(1) << 32)  /* mcp --workspace DIR */
#define OPTION_WRITABLE     (UINT64_C(1) << 33)  /* mcp --writable DIR */
#define OPTION_NO_PROTECT_GIT (UINT64_C(1) << 34) /* mcp --no-protect-git */

/* The verbs, as the option table names those that take an option; an
 * alias is its verb. */
typedef enum VerbFlag {
        VERB_RUN = 1 << 0,
        VERB_STATUS = 1 << 1,
        VERB_LOGS = 1 << 2,
        VERB_STOP = 1 << 3,
        VERB_KILL = 1 << 4,
        VERB_SEND = 1 << 5,
        VERB_LIST = 1 << 6,
        VERB_WAIT = 1 << 7,
        VERB_FORGET = 1 << 8,
        VERB_REAP = 1 << 9,
        VERB_HELP = 1 << 10,
        VERB_ATTACH = 1 << 11,
        VERB_MCP = 1 << 12,
} VerbFlag;

typedef struct Args Args;

typedef int (*VerbDispatch)(sd_bus *bus, const Args *args);

#define VERB_ANY ((unsigned) -1)

typedef struct Verb {
        const char *name;
        VerbFlag flag;
        unsigned min_args, max_args; /* counting the verb itself */
        /* The usage error when min_args are not there; NULL: "Missing job ID". */
        const char *missing;
        /* Its own checks of its options and words, once each option was
         * found to be one it takes: > 0 to go on, or a usage error logged.
         * NULL: none. */
        int (*check)(Args *args);
        /* Returns bgrun's exit status, or a negative error it has logged.
         * NULL: the verb needs no bus (help). */
        VerbDispatch dispatch;
        const char *synopsis;        /* after "bgrun " */
        const char *summary;         /* one line for the list of verbs */
        const char *details;         /* options and examples for help VERB */
} Verb;

struct Args {
        const Verb *verb;
        const Verb *peeked;      /* the verb as found before parsing, for its --help */
        char **words;            /* the verb and its arguments: pointers into argv, NULL-terminated */
        size_t n_words;
        OptionFlag options_seen;
        uint64_t rows_seen;      /* options.c's rows given, a bit each */

        const char *session;
        bool session_short;      /* given as -s, not --session */
        const char *directory;
        const char *timeout_string;
        uint64_t timeout_usec;   /* -t; UINT64_MAX (infinity) if not given */
        bool wait;
        bool json;
        bool follow;
        bool quiet;
        bool clean_env;
        bool stdin_forward;      /* run --stdin */
        bool tty;                /* run --tty */
        bool strict_limits;      /* run --strict-limits */
        int signal;              /* stop --signal; 0: the job's StopSignal */
        uint64_t grace_usec;     /* stop --grace; valid with OPTION_GRACE */
        bool any;                /* wait --any */
        bool ended;              /* forget --ended */
        uint64_t older_than_usec;/* forget --older-than; valid with OPTION_OLDER_THAN */
        uint64_t lines;          /* logs -n; valid with OPTION_LINES */
        bool no_newline;         /* send -n */
        bool eof;                /* send --eof */
        uint64_t offset;         /* logs --offset; valid with OPTION_OFFSET */
        bool plain;              /* logs --plain */
        bool open_stdin;         /* run --open-stdin */
        const char *status;      /* list --status */
        char **env_allow;        /* run --env-allow NAME...: pointers into argv, NULL-terminated */
        size_t n_env_allow;
        uint64_t call_timeout_usec; /* --call-timeout, BGRUN_CALL_TIMEOUT; 0: the default */
        bool keep_jobs;          /* mcp --keep-jobs */
        size_t output_limit;     /* mcp --output-limit; 0: the default */
        int sandbox;             /* run, mcp --sandbox: a SandboxProfile; -1: not given */
        bool network;            /* run, mcp --network: a profile keeps the network */
        bool no_network;         /* run --no-network */
        const char *workspace;   /* mcp --workspace DIR: a pointer into argv */
        char **writable;         /* mcp --writable DIR...: pointers into argv, NULL-terminated */
        size_t n_writable;
        bool no_protect_git;     /* mcp --no-protect-git */
        LaunchArgs launch;       /* -p, -E and the flags that name an option; for run, -t too (MaxRuntimeUSec) */
        BusTarget target;        /* --user, --system, -H, --address */
};

/* The verbs, for help and the tests (verb-table.c). */
const Verb *find_verb(const char *name);
/* The verb flag's code, from above this library: bgrun's main.c hands in
 * bgrun mcp's (the verb table names the verb, its help and its options). */
void verb_table_provide(VerbFlag flag, VerbDispatch dispatch);
void print_verb_help(const Verb *verb);
void print_help(void);
/* The usage line and the verbs only: what a bare `bgrun` shows. */
void print_short_help(FILE *f);

void args_done(Args *args);

/* Parses argv into args (which it initialises; args_done() it in any case).
 * Returns > 0 to go on, 0 to exit successfully (--help, --version, printed
 * on stdout), < 0 on a usage error (already logged). */
int parse_argv(Args *args, int argc, char *argv[]);
