/* SPDX-License-Identifier: MIT */
/* The command line: options (options.c's table) parsed with getopt and
 * checked against the verb they go with (verb-table.c). */

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "log.h"
#include "macro.h"
#include "options.h"
#include "strv.h"

/* Codes getopt returns for long options without a short form. */
#define OPTION_CODE_BASE 0x100

/* Whether short option c always takes a value (not -n: LINES for logs,
 * nothing for send). */
static bool short_takes_value(char c) {
        bool found = false;

        for (size_t i = 0; i < n_options; i++)
                if (options[i].short_name == c) {
                        if (!options[i].argument)
                                return false;
                        found = true;
                }
        return found;
}

static bool long_takes_value(const char *a) {
        for (size_t i = 0; i < n_options; i++)
                if (options[i].name && options[i].argument && streq(a + 2, options[i].name))
                        return true;
        return false;
}

/* The first word that is not an option or an option's argument: the verb,
 * needed before getopt runs, since -n takes LINES for logs and nothing for
 * send. */
static const char *peek_verb(int argc, char *argv[]) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (streq(a, "--"))
                        return NULL;
                if (a[0] != '-' || a[1] == '\0')
                        return a;
                if (a[1] == '-') {
                        if (long_takes_value(a))
                                i++;
                        continue;
                }
                /* -sX takes X; -s takes the next word. */
                if (short_takes_value(a[1]) && a[2] == '\0')
                        i++;
        }
        return NULL;
}

/* The row of short option c: of several, the one that verb takes (for the
 * option string), or the one that takes a value as given (for what getopt
 * returned). */
static const Option *find_short(char c, const Verb *verb, int has_value) {
        const Option *first = NULL;

        for (size_t i = 0; i < n_options; i++) {
                const Option *o = &options[i];

                if (o->short_name != c)
                        continue;
                if (!first)
                        first = o;
                if (verb && (o->verbs & verb->flag))
                        return o;
                if (has_value >= 0 && o->argument == (bool) has_value)
                        return o;
        }
        return first;
}

/* getopt's view of the table: "+" stops at the first word that is not an
 * option, so that run can hand everything after its first COMMAND word to
 * the command. */
static void build_getopt(const Verb *peeked, char *optstring, struct option *longopts) {
        char *p = stpcpy(optstring, "+:");
        size_t n = 0;

        for (size_t i = 0; i < n_options; i++) {
                const Option *o = &options[i];

                if (o->short_name && find_short(o->short_name, peeked, -1) == o) {
                        *p++ = o->short_name;
                        if (o->argument)
                                *p++ = ':';
                }
                /* A long option names its short form, so that getopt says
                 * "-s" when --session lacks its value. */
                if (o->name)
                        longopts[n++] = (struct option) {
                                o->name, o->argument ? required_argument : no_argument, NULL,
                                o->short_name ?: OPTION_CODE_BASE + (int) i,
                        };
        }
        *p = '\0';
        longopts[n] = (struct option) {};
}

static int add_word(Args *args, char *word) {
        return strv_push(&args->words, &args->n_words, word) < 0 ? log_oom() : 0;
}

void args_done(Args *args) {
        free(args->words);
        free(args->env_allow);
        free(args->writable);
        launch_args_done(&args->launch);
        *args = (Args) {};
}

/* A word that is not an option: the verb or one of its arguments; after
 * "--", or after run's first COMMAND word, all the rest (returns 1: getopt
 * is not to be asked again, it would go back to the words it skipped). */
static int add_words(Args *args, int argc, char *argv[]) {
        bool after_dashes = optind > 1 && streq(argv[optind - 1], "--");
        int r;

        if (after_dashes || (args->n_words >= 1 && args->verb && args->verb->flag == VERB_RUN)) {
                for (; optind < argc; optind++) {
                        r = add_word(args, argv[optind]);
                        if (r < 0)
                                return r;
                }
                return 1;
        }

        r = add_word(args, argv[optind]);
        if (r < 0)
                return r;
        if (args->n_words == 1)
                args->verb = find_verb(argv[optind]);
        optind++;
        return 0;
}

static int parse_argv_options(Args *args, int argc, char *argv[]) {
        struct option longopts[OPTIONS_MAX + 1];
        char optstring[2 + 2 * OPTIONS_MAX + 1];
        int r;

        build_getopt(args->peeked, optstring, longopts);

        /* optind 0: start afresh, should this be called again. */
        optind = 0;
        opterr = 0;
        for (;;) {
                const Option *o;
                int long_index = -1, c;

                c = getopt_long(argc, argv, optstring, longopts, &long_index);
                if (c < 0) {
                        if (optind >= argc)
                                break;
                        r = add_words(args, argc, argv);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                break;
                        continue;
                }

                if (c == ':') {
                        if (optopt != 0)
                                return log_usage_error("Option '-%c' needs an argument.", optopt);
                        return log_usage_error("Option '%s' needs an argument.", argv[optind - 1]);
                }
                if (c == '?') {
                        /* The help that lists what this verb takes. */
                        const char *verb = args->peeked && args->peeked->dispatch ? args->peeked->name : NULL;
                        char opt[3] = { '-', (char) optopt, '\0' };
                        const char *what = optopt != 0 ? opt : argv[optind - 1];
                        if (verb)
                                return log_usage_error("Unknown option '%s' for '%s'. See 'bgrun help %s'.", what, verb,
                                                       verb);
                        return log_usage_error("Unknown option '%s'. See 'bgrun --help'.", what);
                }

                o = c >= OPTION_CODE_BASE ? &options[c - OPTION_CODE_BASE] : find_short((char) c, NULL, !!optarg);
                if (!o)
                        return log_usage_error("Unexpected option code %d.", c);
                r = option_apply(o, args, optarg, long_index < 0);
                if (r <= 0)
                        return r;
        }
        return 1;
}

/* The checks between the options and the verb's words. */
static int check_verb(Args *args) {
        const Verb *v = args->verb;

        if (args->n_words < v->min_args) {
                if (v->missing)
                        return log_usage_error("%s", v->missing);
                return log_usage_error("Missing job ID: bgrun %s ID", v->name);
        }
        if (v->max_args != VERB_ANY && args->n_words > v->max_args)
                return log_usage_error("Too many arguments for '%s'. See 'bgrun %s --help'.", v->name, v->name);

        for (size_t i = 0; i < n_options; i++) {
                const Option *o = &options[i];

                if (!(args->rows_seen & (UINT64_C(1) << i)) || !o->verbs || (o->verbs & v->flag))
                        continue;
                if (o->name)
                        return log_usage_error("Option --%s does not apply to '%s'.", o->name, v->name);
                return log_usage_error("Option -%c does not apply to '%s'.", o->short_name, v->name);
        }

        return v->check ? v->check(args) : 1;
}

/* help [VERB]: printed here, as it needs no bus. */
static int help_verb(Args *args) {
        const Verb *v;

        if (args->n_words > 2)
                return log_usage_error("Too many arguments for 'help'. See 'bgrun help'.");
        if (args->n_words == 1) {
                print_help();
                return 0;
        }
        v = find_verb(args->words[1]);
        if (!v)
                return log_usage_error("Unknown command '%s'. See 'bgrun help'.", args->words[1]);
        print_verb_help(v);
        return 0;
}

int parse_argv(Args *args, int argc, char *argv[]) {
        const char *peeked_name;
        int r;

        *args = (Args) { .timeout_usec = UINT64_MAX, .sandbox = -1 };

        /* The variable first: --call-timeout overrides it. */
        const char *e = getenv("BGRUN_CALL_TIMEOUT");
        if (e && e[0]) {
                r = parse_duration_arg(e, "BGRUN_CALL_TIMEOUT", &args->call_timeout_usec);
                if (r < 0)
                        return r;
        }

        peeked_name = peek_verb(argc, argv);
        args->peeked = peeked_name ? find_verb(peeked_name) : NULL;

        r = parse_argv_options(args, argc, argv);
        if (r <= 0)
                return r;

        if (args->target.host && args->target.address)
                return log_usage_error("-H and --address cannot be combined.");
        if (args->target.host && args->target.transport == BUS_TRANSPORT_USER)
                return log_usage_error("-H reaches the system bgrund of a host; --user cannot go with it.");

        if (args->n_words == 0) {
                /* As git and pueue do: what there is to run, and a usage error. */
                print_short_help(stderr);
                return -EINVAL;
        }
        if (!args->verb)
                return log_usage_error("Unknown command '%s'. See 'bgrun --help'.", args->words[0]);

        if (!args->verb->dispatch)
                return help_verb(args);

        return check_verb(args);
}
