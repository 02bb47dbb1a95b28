/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's command line: the options, the verb they go with, and the checks
 * between the two. No bus here: parse_argv() is tested on its own. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "call.h"
#include "launch-args.h"

#define EXIT_USAGE 2

/* Which options were given; each verb says which it accepts. */
typedef enum OptionFlag {
        OPTION_SESSION = 1 << 0,
        OPTION_DIRECTORY = 1 << 1,
        OPTION_TIMEOUT = 1 << 2,
        OPTION_SETENV = 1 << 3,
        OPTION_PROPERTY = 1 << 4,
        OPTION_WAIT = 1 << 5,
        OPTION_JSON = 1 << 6,
        OPTION_FOLLOW = 1 << 7,
        OPTION_QUIET = 1 << 8,
} OptionFlag;

typedef struct Args Args;

#define VERB_ANY ((unsigned) -1)

typedef struct Verb {
        const char *name;
        unsigned min_args, max_args; /* counting the verb itself */
        unsigned options;            /* OptionFlag: the options it takes */
        /* Returns bgrun's exit status, or a negative error it has logged. */
        int (*dispatch)(sd_bus *bus, const Args *args);
} Verb;

struct Args {
        const Verb *verb;
        char **words;            /* the verb and its arguments: pointers into argv, NULL-terminated */
        size_t n_words;
        unsigned options_seen;   /* OptionFlag */

        const char *session;
        const char *directory;
        const char *timeout_string;
        uint64_t timeout_usec;   /* -t; UINT64_MAX (infinity) if not given */
        bool wait;
        bool json;
        bool follow;
        bool quiet;
        LaunchArgs launch;       /* -p, -E; for run, -t too (MaxRuntimeUSec) */
        BusTarget target;        /* --user, --system, -H, --address */
};

void args_done(Args *args);

/* Parses argv into args (which it initialises; args_done() it in any case).
 * Returns > 0 to go on, 0 to exit successfully (--help, --version, printed
 * on stdout), < 0 on a usage error (already logged). */
int parse_argv(Args *args, int argc, char *argv[]);
