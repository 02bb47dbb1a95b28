/* SPDX-License-Identifier: MIT */
/* bgrun: the command-line front end of bgrund. It talks to the daemon over
 * D-Bus only (org.bgrun.Runtime1 on the system bus, or $BGRUN_BUS_ADDRESS).
 * Here: the command line, parsed and checked against the verb it names, and
 * main(), which connects and hands over to the verb (verbs.c). */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "args.h"
#include "build-config.h"
#include "call.h"
#include "duration.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "verbs.h"

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
} OptionFlag;

const char *arg_session = NULL;
const char *arg_directory = NULL;
const char *arg_timeout_string = NULL;
uint64_t arg_timeout_usec = USEC_INFINITY;
char **arg_environment = NULL;
size_t arg_n_environment = 0;
bool arg_wait = false;
bool arg_json = false;
bool arg_follow = false;
bool arg_memory_max_set = false;
uint64_t arg_memory_max = 0;
bool arg_tasks_max_set = false;
uint64_t arg_tasks_max = 0;
bool arg_cpu_quota_set = false;
uint64_t arg_cpu_quota_per_sec_usec = 0;
bool arg_max_runtime_set = false;
uint64_t arg_max_runtime_usec = 0;
const char *arg_user = NULL;
static unsigned arg_options_seen = 0;

static int parse_duration_arg(const char *value, const char *what, uint64_t *ret) {
        int r;

        r = parse_duration_usec(value, ret);
        if (r == -ERANGE)
                return log_usage_error("Duration '%s' for %s is out of range.", value, what);
        if (r < 0)
                return log_usage_error("Invalid duration '%s' for %s (try e.g. 90, 90s, 5min, 1h30min).",
                                       value, what);
        return 0;
}

static int parse_property(const char *assignment) {
        _cleanup_free_ char *name = NULL;
        const char *eq, *value;
        int r;

        eq = strchr(assignment, '=');
        if (!eq || eq == assignment)
                return log_usage_error("Invalid property assignment '%s', expected PROP=VALUE.", assignment);

        name = strndup(assignment, (size_t) (eq - assignment));
        if (!name)
                return log_oom();
        value = eq + 1;

        if (streq(name, "MemoryMax")) {
                r = parse_size_bytes(value, &arg_memory_max);
                if (r < 0)
                        return log_usage_error("Invalid MemoryMax '%s' (bytes, with optional K, M, G, T suffix, or 'infinity').",
                                               value);
                arg_memory_max_set = true;

        } else if (streq(name, "TasksMax")) {
                if (streq(value, "infinity"))
                        arg_tasks_max = UINT64_MAX;
                else if (parse_uint64_strict(value, &arg_tasks_max, NULL) < 0)
                        return log_usage_error("Invalid TasksMax '%s' (a number or 'infinity').", value);
                arg_tasks_max_set = true;

        } else if (streq(name, "CPUQuotaPerSecUSec")) {
                if (strchr(value, '%')) {
                        if (parse_cpu_percent(value, &arg_cpu_quota_per_sec_usec) < 0)
                                return log_usage_error("Invalid CPUQuotaPerSecUSec '%s' (e.g. 50%% or 500ms).", value);
                } else if (parse_duration_usec(value, &arg_cpu_quota_per_sec_usec) < 0)
                        return log_usage_error("Invalid CPUQuotaPerSecUSec '%s' (e.g. 50%% or 500ms).", value);
                arg_cpu_quota_set = true;

        } else if (streq(name, "MaxRuntimeUSec")) {
                r = parse_duration_arg(value, "MaxRuntimeUSec", &arg_max_runtime_usec);
                if (r < 0)
                        return r;
                arg_max_runtime_set = true;

        } else if (streq(name, "User")) {
                if (*value == '\0')
                        return log_usage_error("User= needs a user name.");
                arg_user = value;

        } else
                return log_usage_error("Unknown property '%s' (known: MemoryMax, TasksMax, CPUQuotaPerSecUSec, MaxRuntimeUSec, User).",
                                       name);

        return 0;
}

#define VERB_ANY ((unsigned) -1)

typedef struct Verb {
        const char *name;
        unsigned min_args, max_args; /* counting the verb itself */
        unsigned options;            /* OptionFlag: the options it takes */
        int (*dispatch)(sd_bus *bus, char **args);
} Verb;

static const Verb verbs[] = {
        { "run", 2, VERB_ANY,
          OPTION_SESSION | OPTION_DIRECTORY | OPTION_TIMEOUT | OPTION_SETENV | OPTION_PROPERTY | OPTION_WAIT | OPTION_JSON,
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

static const Verb *arg_verb = NULL;
static char **arg_args = NULL; /* the verb and its arguments; pointers into argv */

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

static int add_positional(char ***list, size_t *n, char *arg) {
        char **p = reallocarray(*list, *n + 2, sizeof(char *));

        if (!p)
                return log_oom();
        p[(*n)++] = arg;
        p[*n] = NULL;
        *list = p;
        return 0;
}

/* Returns > 0 to go on, 0 to exit successfully (--help), < 0 on a usage
 * error (already logged). */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_WAIT,
                ARG_JSON,
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
                {},
        };
        size_t n_args = 0;
        int c, r;

        /* "+": stop at the first word that is not an option, so that "run"
         * can hand everything after its first COMMAND word to the command.
         * Other verbs take options before and after their arguments. */
        opterr = 0;
        for (;;) {
                c = getopt_long(argc, argv, "+:hs:C:t:E:p:f", options, NULL);
                if (c < 0) {
                        bool after_dashes;

                        if (optind >= argc)
                                break;

                        after_dashes = optind > 1 && streq(argv[optind - 1], "--");
                        if (after_dashes || (n_args >= 1 && arg_verb == find_verb("run"))) {
                                /* The rest is positional: COMMAND for run. */
                                for (; optind < argc; optind++) {
                                        r = add_positional(&arg_args, &n_args, argv[optind]);
                                        if (r < 0)
                                                return r;
                                }
                                break;
                        }

                        r = add_positional(&arg_args, &n_args, argv[optind]);
                        if (r < 0)
                                return r;
                        if (n_args == 1)
                                arg_verb = find_verb(argv[optind]);
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
                        arg_session = optarg;
                        arg_options_seen |= OPTION_SESSION;
                        break;

                case 'C':
                        if (!optarg[0])
                                return log_usage_error("--directory= needs a directory.");
                        arg_directory = optarg;
                        arg_options_seen |= OPTION_DIRECTORY;
                        break;

                case 't':
                        /* run: MaxRuntimeUSec; wait: how long to wait. */
                        r = parse_duration_arg(optarg, "--timeout", &arg_timeout_usec);
                        if (r < 0)
                                return r;
                        arg_timeout_string = optarg;
                        arg_options_seen |= OPTION_TIMEOUT;
                        break;

                case 'E': {
                        const char *eq = strchr(optarg, '=');

                        if (!eq || eq == optarg)
                                return log_usage_error("Invalid environment assignment '%s', expected NAME=VALUE.",
                                                       optarg);
                        r = add_positional(&arg_environment, &arg_n_environment, optarg);
                        if (r < 0)
                                return r;
                        arg_options_seen |= OPTION_SETENV;
                        break;
                }

                case 'p':
                        r = parse_property(optarg);
                        if (r < 0)
                                return r;
                        arg_options_seen |= OPTION_PROPERTY;
                        break;

                case ARG_WAIT:
                        arg_wait = true;
                        arg_options_seen |= OPTION_WAIT;
                        break;

                case ARG_JSON:
                        arg_json = true;
                        arg_options_seen |= OPTION_JSON;
                        break;

                case 'f':
                        arg_follow = true;
                        arg_options_seen |= OPTION_FOLLOW;
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

        if (n_args == 0)
                return log_usage_error("Missing command. See 'bgrun --help'.");
        if (!arg_verb)
                return log_usage_error("Unknown command '%s'. See 'bgrun --help'.", arg_args[0]);

        if (n_args < arg_verb->min_args) {
                if (arg_verb->dispatch == verb_run)
                        return log_usage_error("Missing the command to run: bgrun run [OPTIONS] -- COMMAND...");
                return log_usage_error("Missing job ID: bgrun %s ID", arg_verb->name);
        }
        if (arg_verb->max_args != VERB_ANY && n_args > arg_verb->max_args)
                return log_usage_error("Too many arguments for '%s'. See 'bgrun --help'.", arg_verb->name);

        for (size_t i = 0; i < ELEMENTSOF(option_names); i++)
                if ((arg_options_seen & option_names[i].flag) && !(arg_verb->options & option_names[i].flag))
                        return log_usage_error("Option %s does not apply to '%s'.", option_names[i].name,
                                               arg_verb->name);

        /* -t means the wall-clock limit for run; -p MaxRuntimeUSec= is the same. */
        if (arg_verb->dispatch == verb_run && (arg_options_seen & OPTION_TIMEOUT) && !arg_max_runtime_set) {
                arg_max_runtime_usec = arg_timeout_usec;
                arg_max_runtime_set = true;
        }

        return 1;
}

static int run(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        r = bus_connect(&bus);
        if (r < 0)
                return r;

        return arg_verb->dispatch(bus, arg_args);
}

int main(int argc, char *argv[]) {
        int r;

        log_setup("bgrun", LOG_TARGET_CONSOLE);
        r = run(argc, argv);

        free(arg_args);
        free(arg_environment);

        if (fflush(stdout) == EOF && r >= 0) {
                log_error_errno(errno, "Failed to write output: %m");
                return EXIT_FAILURE;
        }
        return r < 0 ? EXIT_FAILURE : r;
}
