/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's options as a table: each with its forms, the verbs that take it
 * and what it sets. A new option is a row here and its handling; one that
 * gives a Launch option names its row of the option table, and that is
 * all of it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmdline.h"

typedef struct Option {
        const char *name;        /* the long form, without "--"; NULL: none */
        char short_name;         /* 0: none */
        bool argument;           /* takes a value */
        OptionFlag flag;         /* 0: a global option, before or after any verb */
        unsigned verbs;          /* VerbFlag: the verbs that take it */
        size_t field;            /* with parse NULL and no launch: the bool of Args it sets */
        /* Takes value (NULL without argument); short_form: given as -X.
         * Returns > 0 to go on, 0 to exit successfully (--help, --version),
         * or a usage error it has logged. */
        int (*parse)(Args *args, const char *value, bool short_form);
        /* The Launch option it gives (LaunchOption + 1; 0: none): with a
         * value, by the option's LaunchText; a switch sets launch_value. */
        unsigned launch;
        uint64_t launch_value;
} Option;

/* Room for the table in getopt's arrays, built on the stack. */
#define OPTIONS_MAX 64

extern const Option options[];
extern const size_t n_options;

/* --call-timeout's value (also BGRUN_CALL_TIMEOUT's) into args. */
int parse_call_timeout(Args *args, const char *value, bool short_form);

/* Sets what o says in args. Returns as o->parse. */
int option_apply(const Option *o, Args *args, const char *value, bool short_form);
