/* SPDX-License-Identifier: MIT */
/* The command line: options parsed and checked against the verb they go
 * with, and --help. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "cmdline.h"
#include "log.h"
#include "macro.h"
#include "verbs.h"

static const Verb verbs[] = {
        { "run", 2, VERB_ANY,
          OPTION_SESSION | OPTION_DIRECTORY | OPTION_TIMEOUT | OPTION_SETENV | OPTION_PROPERTY | OPTION_WAIT | OPTION_JSON |
          OPTION_QUIET,
          verb_run },
        { "status", 2, 2, OPTION_JSON, verb_status },
        { "show", 2, 2, OPTION_JSON, verb_status },
        { "logs", 2, 2, OPTION_FOLLOW, verb_logs },
        { "kill", 2, 2, OPTION_JSON, verb_kill },
        { "list", 1, 1, OPTION_SESSION | OPTION_JSON, verb_list },
        { "ls", 1, 1, OPTION_SESSION | OPTION_JSON, verb_list },
        { "wait", 2, 2, OPTION_TIMEOUT | OPTION_JSON, verb_wait },
        { "forget", 2, 2, 0, verb_forget },
        { "reap", 1, 1, OPTION_JSON, verb_reap },
};

static const struct {
        OptionFlag flag;
        const char *name;
} option_names[] = {
        { OPTION_SESSION, "--session" },
        { OPTION_DIRECTORY, "--directory" },
        { OPTION_TIMEOUT, "--timeout" },
        { OPTION_SETENV, "--setenv" },
        { OPTION_PROPERTY, "--property" },
        { OPTION_WAIT, "--wait" },
        { OPTION_JSON, "--json" },
        { OPTION_FOLLOW, "--follow" },
        { OPTION_QUIET, "--quiet" },
};

static void help(void) {
        printf("bgrun [OPTIONS...] COMMAND ...\n"
               "\n"
               "Run commands as background jobs of bgrund, and look after them.\n"
               "\n"
               "Commands:\n"
               "  run [OPTIONS] -- COMMAND...  Start COMMAND as a background job, print its ID\n"
               "  status ID                    Show the job's record (alias: show)\n"
               "  logs ID                      Print the job's output (stdout and stderr)\n"
               "  kill ID                      End the job and everything it started\n"
               "  list                         List jobs (alias: ls)\n"
               "  wait ID                      Wait for the job to end\n"
               "  forget ID                    Remove an ended job's record and output\n"
               "  reap                         Re-check all jobs, as bgrund does at start (admin)\n"
               "\n"
               "Options:\n"
               "  -h --help                    Show this help\n"
               "     --version                 Show the version\n"
               "  -s --session=SESSION         run: tag the job with SESSION; list: only SESSION\n"
               "  -C --directory=DIR           run: working directory (default: the current one)\n"
               "  -t --timeout=DURATION        run: kill the job after DURATION (MaxRuntimeUSec)\n"
               "                               wait: give up after DURATION (default: never)\n"
               "  -E --setenv=NAME=VALUE       run: set an environment variable (repeatable)\n"
               "  -p --property=PROP=VALUE     run: set a limit (repeatable):\n"
               "                                 MemoryMax=BYTES (K, M, G, T: powers of 1024; or infinity)\n"
               "                                 TasksMax=N (or infinity)\n"
               "                                 CPUQuotaPerSecUSec=PERCENT%% or DURATION (50%% = 500ms)\n"
               "                                 MaxRuntimeUSec=DURATION\n"
               "                                 User=NAME (root only)\n"
               "     --wait                    run: stream the output, exit with the job's status\n"
               "                               (with --json: print the final record instead)\n"
               "  -f --follow                  logs: keep printing until the job ends\n"
               "     --json                    Print records as JSON\n"
               "\n"
               "The words of COMMAND are joined with single spaces into one string that\n"
               "/bin/sh -c runs, as with sh -c \"$*\": quote as you would for sh -c, e.g.\n"
               "  bgrun run -- 'make -j4 > build.log 2>&1; echo done'\n"
               "Options after the first word of COMMAND belong to COMMAND.\n"
               "\n"
               "DURATION reads like systemd's: 90, 90s, 500ms, 5min, 1h30min.\n"
               "\n"
               "Exit status: 0 on success, 1 on failure, 2 on a usage error. run --wait and\n"
               "wait exit with the job's exit status, 128+N if signal N ended it, 124 if it\n"
               "timed out.\n"
               "\n"
               "Set BGRUN_BUS_ADDRESS to talk to a bus other than the system bus.\n");
}

static const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

static int add_word(Args *args, char *word) {
        char **p = reallocarray(args->words, args->n_words + 2, sizeof(char *));

        if (!p)
                return log_oom();
        p[args->n_words++] = word;
        p[args->n_words] = NULL;
        args->words = p;
        return 0;
}

void args_done(Args *args) {
        free(args->words);
        launch_args_done(&args->launch);
        *args = (Args) {};
}

int parse_argv(Args *args, int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_WAIT,
                ARG_JSON,
                ARG_USER,
                ARG_SYSTEM,
                ARG_ADDRESS,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "session", required_argument, NULL, 's' },
                { "directory", required_argument, NULL, 'C' },
                { "timeout", required_argument, NULL, 't' },
                { "setenv", required_argument, NULL, 'E' },
                { "property", required_argument, NULL, 'p' },
                { "wait", no_argument, NULL, ARG_WAIT },
                { "json", no_argument, NULL, ARG_JSON },
                { "follow", no_argument, NULL, 'f' },
                { "quiet", no_argument, NULL, 'q' },
                { "user", no_argument, NULL, ARG_USER },
                { "system", no_argument, NULL, ARG_SYSTEM },
                { "host", required_argument, NULL, 'H' },
                { "address", required_argument, NULL, ARG_ADDRESS },
                {},
        };
        int c, r;

        *args = (Args) { .timeout_usec = UINT64_MAX };

        /* "+": stop at the first word that is not an option, so that "run"
         * can hand everything after its first COMMAND word to the command.
         * Other verbs take options before and after their arguments.
         * optind 0: start afresh, should this be called again. */
        optind = 0;
        opterr = 0;
        for (;;) {
                c = getopt_long(argc, argv, "+:hs:C:t:E:p:fH:q", options, NULL);
                if (c < 0) {
                        bool after_dashes;

                        if (optind >= argc)
                                break;

                        after_dashes = optind > 1 && streq(argv[optind - 1], "--");
                        if (after_dashes || (args->n_words >= 1 && args->verb == find_verb("run"))) {
                                /* The rest is positional: COMMAND for run. */
                                for (; optind < argc; optind++) {
                                        r = add_word(args, argv[optind]);
                                        if (r < 0)
                                                return r;
                                }
                                break;
                        }

                        r = add_word(args, argv[optind]);
                        if (r < 0)
                                return r;
                        if (args->n_words == 1)
                                args->verb = find_verb(argv[optind]);
                        optind++;
                        continue;
                }

                switch (c) {
                case 'h':
                        help();
                        return 0;

                case ARG_VERSION:
                        printf("bgrun %s\n", BGRUN_VERSION);
                        return 0;

                case 's':
                        args->session = optarg;
                        args->options_seen |= OPTION_SESSION;
                        break;

                case 'C':
                        if (!optarg[0])
                                return log_usage_error("--directory= needs a directory.");
                        args->directory = optarg;
                        args->options_seen |= OPTION_DIRECTORY;
                        break;

                case 't':
                        /* run: MaxRuntimeUSec; wait: how long to wait. */
                        r = parse_duration_arg(optarg, "--timeout", &args->timeout_usec);
                        if (r < 0)
                                return r;
                        args->timeout_string = optarg;
                        args->options_seen |= OPTION_TIMEOUT;
                        break;

                case 'E':
                        r = launch_args_add_environment(&args->launch, optarg);
                        if (r < 0)
                                return r;
                        args->options_seen |= OPTION_SETENV;
                        break;

                case 'p':
                        r = launch_args_parse_property(&args->launch, optarg);
                        if (r < 0)
                                return r;
                        args->options_seen |= OPTION_PROPERTY;
                        break;

                case ARG_WAIT:
                        args->wait = true;
                        args->options_seen |= OPTION_WAIT;
                        break;

                case ARG_JSON:
                        args->json = true;
                        args->options_seen |= OPTION_JSON;
                        break;

                case 'f':
                        args->follow = true;
                        args->options_seen |= OPTION_FOLLOW;
                        break;

                case 'q':
                        args->quiet = true;
                        args->options_seen |= OPTION_QUIET;
                        break;

                case ARG_USER:
                case ARG_SYSTEM:
                        args->target.transport = c == ARG_USER ? BUS_TRANSPORT_USER : BUS_TRANSPORT_SYSTEM;
                        args->target.transport_given = true;
                        break;

                case 'H':
                        if (!optarg[0])
                                return log_usage_error("-H needs a host: [USER@]HOST.");
                        args->target.host = optarg;
                        break;

                case ARG_ADDRESS:
                        if (!optarg[0])
                                return log_usage_error("--address= needs a D-Bus address.");
                        args->target.address = optarg;
                        break;

                case ':':
                        if (optopt != 0)
                                return log_usage_error("Option '-%c' needs an argument.", optopt);
                        return log_usage_error("Option '%s' needs an argument.", argv[optind - 1]);

                case '?':
                        if (optopt != 0)
                                return log_usage_error("Unknown option '-%c'. See 'bgrun --help'.", optopt);
                        return log_usage_error("Unknown option '%s'. See 'bgrun --help'.", argv[optind - 1]);

                default:
                        return log_usage_error("Unexpected option code %d.", c);
                }
        }

        if (args->target.host && args->target.address)
                return log_usage_error("-H and --address cannot be combined.");
        if (args->target.host && args->target.transport == BUS_TRANSPORT_USER)
                return log_usage_error("-H reaches the system bgrund of a host; --user cannot go with it.");

        if (args->n_words == 0)
                return log_usage_error("Missing command. See 'bgrun --help'.");
        if (!args->verb)
                return log_usage_error("Unknown command '%s'. See 'bgrun --help'.", args->words[0]);

        if (args->n_words < args->verb->min_args) {
                if (args->verb->dispatch == verb_run)
                        return log_usage_error("Missing the command to run: bgrun run [OPTIONS] -- COMMAND...");
                return log_usage_error("Missing job ID: bgrun %s ID", args->verb->name);
        }
        if (args->verb->max_args != VERB_ANY && args->n_words > args->verb->max_args)
                return log_usage_error("Too many arguments for '%s'. See 'bgrun --help'.", args->verb->name);

        for (size_t i = 0; i < ELEMENTSOF(option_names); i++)
                if ((args->options_seen & option_names[i].flag) && !(args->verb->options & option_names[i].flag))
                        return log_usage_error("Option %s does not apply to '%s'.", option_names[i].name,
                                               args->verb->name);

        /* -t means the wall-clock limit for run; -p MaxRuntimeUSec= is the same. */
        if (args->verb->dispatch == verb_run && (args->options_seen & OPTION_TIMEOUT) &&
            !launch_args_is_set(&args->launch, LAUNCH_OPTION_MAX_RUNTIME_USEC))
                launch_args_set(&args->launch, LAUNCH_OPTION_MAX_RUNTIME_USEC,
                                (LaunchValue) { .u64 = args->timeout_usec });

        return 1;
}
