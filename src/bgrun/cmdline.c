/* SPDX-License-Identifier: MIT */
/* The command line: options parsed and checked against the verb they go
 * with, and --help. */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "cmdline.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "strv.h"
#include "verbs.h"

#define RUN_OPTIONS                                                                              \
        (OPTION_SESSION | OPTION_DIRECTORY | OPTION_TIMEOUT | OPTION_SETENV | OPTION_PROPERTY | OPTION_WAIT | \
         OPTION_JSON | OPTION_QUIET | OPTION_CLEAN_ENV | OPTION_STDIN | OPTION_TTY)

static const char run_details[] =
        "Start COMMAND as a background job of bgrund and print its ID. One word after\n"
        "-- is a shell command line ('make && make test'); several words are an argv,\n"
        "quoted so that the job runs exactly those words.\n"
        "\n"
        "The job gets this environment, except variables whose names contain KEY,\n"
        "SECRET, TOKEN or PASSWORD (any case), and NOTIFY_SOCKET, LISTEN_*,\n"
        "JOURNAL_STREAM, INVOCATION_ID, BGRUN_*. With -H, only -E is sent.\n"
        "\n"
        "Options:\n"
        "  -s --session=SESSION      Tag the job with SESSION (see kill --session)\n"
        "  -C --directory=DIR        Working directory (default: the current one; / with -H)\n"
        "  -t --timeout=DURATION     End the job after DURATION (MaxRuntimeUSec=)\n"
        "  -E --setenv=NAME=VALUE    Set an environment variable (repeatable)\n"
        "  -p --property=PROP=VALUE  Set a launch option (repeatable):\n"
        "                              MemoryMax=BYTES (K, M, G, T: powers of 1024; or infinity)\n"
        "                              TasksMax=N (or infinity)\n"
        "                              CPUQuotaPerSecUSec=PERCENT% or DURATION (50% = 500ms)\n"
        "                              MaxRuntimeUSec=DURATION\n"
        "                              StopSignal=SIGNAL, StopGraceUSec=DURATION (how stop ends it)\n"
        "                              User=NAME (root only; that user's HOME, USER, LOGNAME\n"
        "                              and SHELL win over this environment's)\n"
        "     --clean-env            Pass none of this environment (only -E)\n"
        "     --wait                 Stream the output and exit with the job's status\n"
        "                            (128+N for signal N, 124 on timeout); with --json,\n"
        "                            print the final record instead. Ctrl-C stops the job\n"
        "                            gracefully (a second one kills it at once)\n"
        "     --stdin                Forward this standard input to the job until its end\n"
        "                            (from a terminal without --wait, the input stays open\n"
        "                            for bgrun send)\n"
        "     --tty                  Run the job on a terminal; with --wait attach this one\n"
        "                            to it (raw mode; ^] three times within 1s detaches)\n"
        "  -q --quiet                No 'Running as job ID' line with --wait\n"
        "     --json                 Print the record as JSON\n"
        "\n"
        "Options after the first word of COMMAND belong to COMMAND.\n"
        "\n"
        "Examples:\n"
        "  bgrun run -- 'make -j4 > build.log 2>&1; echo done'\n"
        "  bgrun run --wait -- python3 -c 'print(1)'\n"
        "  bgrun run -s build -t 30min -p MemoryMax=2G -- make test\n"
        "  bgrun run --stdin --wait -- 'read x; echo got $x' <<< hello\n"
        "  bgrun run --tty --wait -- top\n";

static const char status_details[] =
        "Show the job's record: status, exit code or signal, times, containment,\n"
        "teardown, and what it used (CPU time, memory peak) where bgrund tells.\n"
        "\n"
        "Options:\n"
        "     --json                 The record as JSON (keys as org.bgrun.Runtime1(5) lists)\n"
        "\n"
        "Examples:\n"
        "  bgrun status 7xk2p\n"
        "  bgrun status 7xk2p --json | jq .exit_code\n";

static const char logs_details[] =
        "Print the job's output (stdout and stderr together, as they came).\n"
        "\n"
        "Options:\n"
        "  -f --follow               Keep printing until the job ends\n"
        "  -n --lines=LINES          Only the last LINES lines (with -f, -n 0 starts at the end)\n"
        "\n"
        "Examples:\n"
        "  bgrun logs 7xk2p -n 20\n"
        "  bgrun logs -f -n 0 7xk2p\n";

static const char stop_details[] =
        "End jobs gracefully: their StopSignal (SIGTERM unless launched otherwise) to\n"
        "every process, then, after the grace (StopGraceUSec=, 5s unless launched\n"
        "otherwise), cgroup.kill. Returns once nothing of them is left alive.\n"
        "\n"
        "Options:\n"
        "     --signal=SIGNAL        Send SIGNAL (INT, SIGINT, 2) instead\n"
        "     --grace=DURATION       Wait DURATION before killing (0: at once)\n"
        "     --json                 Print bgrund's answer as JSON\n"
        "\n"
        "Examples:\n"
        "  bgrun stop 7xk2p\n"
        "  bgrun stop 7xk2p q9m3d --signal INT --grace 30s\n";

static const char kill_details[] =
        "End jobs at once (cgroup.kill) with everything they started, and confirm\n"
        "that nothing of them is left alive.\n"
        "\n"
        "Options:\n"
        "     --session=SESSION      Kill every running job of yours in SESSION\n"
        "                            (no short form: -s is a signal in systemctl kill)\n"
        "     --json                 Print bgrund's answer as JSON\n"
        "\n"
        "Examples:\n"
        "  bgrun kill 7xk2p q9m3d\n"
        "  bgrun kill --session build\n";

static const char send_details[] =
        "Write TEXT and a newline to the standard input of a job started with --stdin\n"
        "or --tty; --eof ends its input (on a terminal, the EOF character).\n"
        "\n"
        "Options:\n"
        "  -n                        No newline after TEXT\n"
        "     --eof                  End the input (after TEXT, if given)\n"
        "\n"
        "Examples:\n"
        "  id=$(bgrun run --stdin -- 'while read l; do echo \"got $l\"; done')\n"
        "  bgrun send $id hello\n"
        "  bgrun send $id --eof\n";

static const char list_details[] =
        "List the jobs you may see: ID, session, status and command.\n"
        "\n"
        "Options:\n"
        "  -s --session=SESSION      Only the jobs of SESSION\n"
        "     --json                 A JSON array\n"
        "\n"
        "Examples:\n"
        "  bgrun list\n"
        "  bgrun ls -s build --json | jq -r '.[].id'\n";

static const char wait_details[] =
        "Wait for jobs to end, and say how each ended. Exits with the job's status\n"
        "(128+N for signal N, 124 on timeout); of several, the first that failed.\n"
        "\n"
        "Options:\n"
        "  -t --timeout=DURATION     Give up after DURATION (exit status 1)\n"
        "     --any                  Return when the first of them ends\n"
        "     --json                 Print the record (of several: an array) as JSON\n"
        "\n"
        "Examples:\n"
        "  bgrun wait 7xk2p\n"
        "  bgrun wait 7xk2p q9m3d --any -t 10min\n";

static const char forget_details[] =
        "Remove ended jobs' records and output.\n"
        "\n"
        "Options:\n"
        "     --ended                Every ended job of yours, not other users' (instead\n"
        "                            of IDs)\n"
        "  -s --session=SESSION      With --ended: only those of SESSION\n"
        "     --older-than=DURATION  With --ended: only those that ended longer ago\n"
        "\n"
        "Examples:\n"
        "  bgrun forget 7xk2p\n"
        "  bgrun forget --ended -s build --older-than 1h\n";

static const char reap_details[] =
        "Re-check every job as bgrund does at start: keep those whose supervisor it\n"
        "verifies, release the containment of the others (admin only).\n"
        "\n"
        "Options:\n"
        "     --json                 Print the counts as JSON\n";

static const char help_details[] =
        "Show the list of verbs, or one verb's options and examples.\n"
        "\n"
        "Examples:\n"
        "  bgrun help\n"
        "  bgrun help run\n";

static const Verb verbs[] = {
        { "run", 2, VERB_ANY, RUN_OPTIONS, verb_run,
          "run [OPTIONS...] -- COMMAND...", "Start COMMAND as a background job, print its ID", run_details },
        { "status", 2, 2, OPTION_JSON, verb_status,
          "status ID [--json]", "Show the job's record (alias: show)", status_details },
        { "show", 2, 2, OPTION_JSON, verb_status, "show ID [--json]", NULL, status_details },
        { "logs", 2, 2, OPTION_FOLLOW | OPTION_LINES, verb_logs,
          "logs ID [-f] [-n LINES]", "Print the job's output (stdout and stderr)", logs_details },
        { "stop", 2, VERB_ANY, OPTION_SIGNAL | OPTION_GRACE | OPTION_JSON, verb_stop,
          "stop ID... [--signal SIGNAL] [--grace DURATION]", "End jobs gracefully: a signal, a grace, then kill",
          stop_details },
        { "kill", 1, VERB_ANY, OPTION_SESSION | OPTION_JSON, verb_kill,
          "kill ID... | --session SESSION [--json]", "End jobs at once with everything they started", kill_details },
        { "send", 2, 3, OPTION_NO_NEWLINE | OPTION_EOF, verb_send,
          "send ID TEXT | send ID --eof", "Write to the input of a --stdin or --tty job", send_details },
        { "list", 1, 1, OPTION_SESSION | OPTION_JSON, verb_list,
          "list [-s SESSION] [--json]", "List jobs (alias: ls)", list_details },
        { "ls", 1, 1, OPTION_SESSION | OPTION_JSON, verb_list, "ls [-s SESSION] [--json]", NULL, list_details },
        { "wait", 2, VERB_ANY, OPTION_TIMEOUT | OPTION_ANY | OPTION_JSON, verb_wait,
          "wait ID... [-t DURATION] [--any] [--json]", "Wait for jobs to end", wait_details },
        { "forget", 1, VERB_ANY, OPTION_ENDED | OPTION_SESSION | OPTION_OLDER_THAN, verb_forget,
          "forget ID... | --ended [-s SESSION] [--older-than DURATION]",
          "Remove ended jobs' records and output", forget_details },
        { "reap", 1, 1, OPTION_JSON, verb_reap, "reap [--json]", "Re-check all jobs, as bgrund does at start (admin)",
          reap_details },
        { "help", 1, 2, 0, NULL, "help [VERB]", "Show this help, or a verb's", help_details },
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
        { OPTION_CLEAN_ENV, "--clean-env" },
        { OPTION_STDIN, "--stdin" },
        { OPTION_TTY, "--tty" },
        { OPTION_SIGNAL, "--signal" },
        { OPTION_GRACE, "--grace" },
        { OPTION_ANY, "--any" },
        { OPTION_ENDED, "--ended" },
        { OPTION_OLDER_THAN, "--older-than" },
        { OPTION_LINES, "--lines" },
        { OPTION_NO_NEWLINE, "-n" },
        { OPTION_EOF, "--eof" },
};

void print_help(void) {
        printf("bgrun [OPTIONS...] COMMAND ...\n"
               "\n"
               "Run commands as background jobs of bgrund, and look after them.\n"
               "\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (verbs[i].summary)
                        printf("  %-30s %s\n", verbs[i].name, verbs[i].summary);
        printf("\n"
               "Options:\n"
               "  -h --help                      Show this help ('bgrun help VERB': a verb's)\n"
               "     --version                   Show the version\n"
               "     --system                    Talk to the system bgrund (the default)\n"
               "     --user                      Talk to your own bgrund --user\n"
               "  -H --host=[USER@]HOST          Talk to HOST's system bgrund over ssh\n"
               "     --address=ADDRESS           Talk to bgrund at a D-Bus ADDRESS (a bus, or\n"
               "                                 bgrund --listen's socket: unix:path=/run/bgrun/bus)\n"
               "\n"
               "See 'bgrun help VERB' (or 'bgrun VERB --help') for a verb's options and examples.\n"
               "\n"
               "DURATION reads like systemd's: 90, 90s, 500ms, 5min, 1h30min.\n"
               "\n"
               "Exit status: 0 on success, 1 on failure, 2 on a usage error. run --wait and\n"
               "wait exit with the job's exit status, 128+N if signal N ended it, 124 if it\n"
               "timed out.\n"
               "\n"
               "Environment: BGRUN_ADDRESS, like --address. With no bus at all, bgrun uses\n"
               "bgrund --listen's default socket.\n");
}

void print_verb_help(const Verb *verb) {
        printf("bgrun %s\n\n%s", verb->synopsis, verb->details);
        if (verb->dispatch)
                printf("\nGlobal options (before the verb): --system, --user, -H [USER@]HOST, --address ADDRESS;\n"
                       "see 'bgrun help'.\n");
}

const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

int parse_signal(const char *s) {
        const char *name = s;
        uint64_t n;

        if (parse_uint64_strict(s, &n, NULL) >= 0)
                return n >= 1 && n < (uint64_t) NSIG ? (int) n : -EINVAL;

        if (strncasecmp(name, "SIG", 3) == 0)
                name += 3;
        for (int sig = 1; sig < NSIG; sig++) {
                const char *abbrev = sigabbrev_np(sig);
                if (abbrev && strcasecmp(abbrev, name) == 0)
                        return sig;
        }
        return -EINVAL;
}

/* The first word that is not an option or an option's argument: the verb,
 * needed before getopt runs, since -n takes LINES for logs and nothing for
 * send. */
static const char *peek_verb(int argc, char *argv[]) {
        static const char *const long_with_argument[] = {
                "--session", "--directory", "--timeout", "--setenv", "--property", "--host",
                "--address", "--signal", "--grace", "--older-than", "--lines",
        };

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (streq(a, "--"))
                        return NULL;
                if (a[0] != '-' || a[1] == '\0')
                        return a;
                if (a[1] == '-') {
                        for (size_t k = 0; k < ELEMENTSOF(long_with_argument); k++)
                                if (streq(a, long_with_argument[k]))
                                        i++;
                        continue;
                }
                /* -sX takes X; -s takes the next word. */
                if (strchr("sCtEpH", a[1]) && a[2] == '\0')
                        i++;
        }
        return NULL;
}

static int add_word(Args *args, char *word) {
        return strv_push(&args->words, &args->n_words, word) < 0 ? log_oom() : 0;
}

void args_done(Args *args) {
        free(args->words);
        launch_args_done(&args->launch);
        *args = (Args) {};
}

static int parse_argv_options(Args *args, int argc, char *argv[], const Verb *peeked) {
        enum {
                ARG_VERSION = 0x100,
                ARG_WAIT,
                ARG_JSON,
                ARG_USER,
                ARG_SYSTEM,
                ARG_ADDRESS,
                ARG_CLEAN_ENV,
                ARG_STDIN,
                ARG_TTY,
                ARG_SIGNAL,
                ARG_GRACE,
                ARG_ANY,
                ARG_ENDED,
                ARG_OLDER_THAN,
                ARG_EOF,
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
                { "clean-env", no_argument, NULL, ARG_CLEAN_ENV },
                { "stdin", no_argument, NULL, ARG_STDIN },
                { "tty", no_argument, NULL, ARG_TTY },
                { "signal", required_argument, NULL, ARG_SIGNAL },
                { "grace", required_argument, NULL, ARG_GRACE },
                { "any", no_argument, NULL, ARG_ANY },
                { "ended", no_argument, NULL, ARG_ENDED },
                { "older-than", required_argument, NULL, ARG_OLDER_THAN },
                { "lines", required_argument, NULL, 'n' },
                { "eof", no_argument, NULL, ARG_EOF },
                {},
        };
        /* "+": stop at the first word that is not an option, so that "run"
         * can hand everything after its first COMMAND word to the command.
         * send's -n is a flag, logs' takes LINES. */
        const char *optstring = peeked && streq(peeked->name, "send") ? "+:hs:C:t:E:p:fH:qn" : "+:hs:C:t:E:p:fH:qn:";
        int c, r;

        /* optind 0: start afresh, should this be called again. */
        optind = 0;
        opterr = 0;
        for (;;) {
                int long_index = -1;

                c = getopt_long(argc, argv, optstring, options, &long_index);
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
                        if (peeked)
                                print_verb_help(peeked);
                        else
                                print_help();
                        return 0;

                case ARG_VERSION:
                        printf("bgrun %s\n", BGRUN_VERSION);
                        return 0;

                case 's':
                        args->session = optarg;
                        args->session_short = long_index < 0;
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

                case ARG_CLEAN_ENV:
                        args->clean_env = true;
                        args->options_seen |= OPTION_CLEAN_ENV;
                        break;

                case ARG_STDIN:
                        args->stdin_forward = true;
                        args->options_seen |= OPTION_STDIN;
                        break;

                case ARG_TTY:
                        args->tty = true;
                        args->options_seen |= OPTION_TTY;
                        break;

                case ARG_SIGNAL:
                        r = parse_signal(optarg);
                        if (r < 0)
                                return log_usage_error("Invalid signal '%s' (a name as TERM or SIGINT, or a number).",
                                                       optarg);
                        args->signal = r;
                        args->options_seen |= OPTION_SIGNAL;
                        break;

                case ARG_GRACE:
                        r = parse_duration_arg(optarg, "--grace", &args->grace_usec);
                        if (r < 0)
                                return r;
                        args->options_seen |= OPTION_GRACE;
                        break;

                case ARG_ANY:
                        args->any = true;
                        args->options_seen |= OPTION_ANY;
                        break;

                case ARG_ENDED:
                        args->ended = true;
                        args->options_seen |= OPTION_ENDED;
                        break;

                case ARG_OLDER_THAN:
                        r = parse_duration_arg(optarg, "--older-than", &args->older_than_usec);
                        if (r < 0)
                                return r;
                        args->options_seen |= OPTION_OLDER_THAN;
                        break;

                case 'n':
                        if (!optarg) { /* send -n */
                                args->no_newline = true;
                                args->options_seen |= OPTION_NO_NEWLINE;
                                break;
                        }
                        if (parse_uint64_strict(optarg, &args->lines, NULL) < 0)
                                return log_usage_error("Invalid number of lines '%s'.", optarg);
                        args->options_seen |= OPTION_LINES;
                        break;

                case ARG_EOF:
                        args->eof = true;
                        args->options_seen |= OPTION_EOF;
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
        return 1;
}

/* The checks between the options and the verb's words. */
static int check_verb(Args *args) {
        const Verb *v = args->verb;
        size_t n_ids = args->n_words - 1;

        if (args->n_words < v->min_args) {
                if (v->dispatch == verb_run)
                        return log_usage_error("Missing the command to run: bgrun run [OPTIONS] -- COMMAND...");
                if (v->dispatch == verb_send)
                        return log_usage_error("Missing job ID: bgrun send ID TEXT | send ID --eof");
                return log_usage_error("Missing job ID: bgrun %s ID", v->name);
        }
        if (v->max_args != VERB_ANY && args->n_words > v->max_args)
                return log_usage_error("Too many arguments for '%s'. See 'bgrun %s --help'.", v->name, v->name);

        for (size_t i = 0; i < ELEMENTSOF(option_names); i++)
                if ((args->options_seen & option_names[i].flag) && !(v->options & option_names[i].flag))
                        return log_usage_error("Option %s does not apply to '%s'.", option_names[i].name, v->name);

        if (v->dispatch == verb_kill) {
                if (args->session && args->session_short)
                        return log_usage_error("kill takes --session SESSION (no -s: in systemctl kill, -s is a signal).");
                if (args->session && n_ids > 0)
                        return log_usage_error("kill takes job IDs or --session SESSION, not both.");
                if (!args->session && n_ids == 0)
                        return log_usage_error("Missing job ID: bgrun kill ID... | kill --session SESSION");
                if (args->session && !args->session[0])
                        return log_usage_error("--session= needs a session.");
        }

        if (v->dispatch == verb_forget) {
                if (args->ended && n_ids > 0)
                        return log_usage_error("forget takes job IDs or --ended, not both.");
                if (!args->ended && n_ids == 0)
                        return log_usage_error("Missing job ID: bgrun forget ID... | forget --ended");
                if (!args->ended && (args->options_seen & (OPTION_SESSION | OPTION_OLDER_THAN)))
                        return log_usage_error("--session and --older-than go with forget --ended.");
        }

        if (v->dispatch == verb_send) {
                if (n_ids == 1 && !args->eof)
                        return log_usage_error("Missing what to send: bgrun send ID TEXT | send ID --eof");
        }

        if (v->dispatch == verb_logs && (args->options_seen & OPTION_LINES) && args->lines == 0 && !args->follow) {
                /* Nothing to print: fine, as tail -n 0 does. */
        }

        if (v->dispatch == verb_run) {
                if (args->stdin_forward && args->tty)
                        return log_usage_error("--stdin and --tty cannot be combined (a terminal is the job's input).");
                /* -t means the wall-clock limit for run; -p MaxRuntimeUSec= is the same. */
                if ((args->options_seen & OPTION_TIMEOUT) &&
                    !launch_args_is_set(&args->launch, LAUNCH_OPTION_MAX_RUNTIME_USEC))
                        launch_args_set(&args->launch, LAUNCH_OPTION_MAX_RUNTIME_USEC,
                                        (LaunchValue) { .u64 = args->timeout_usec });
        }
        return 1;
}

int parse_argv(Args *args, int argc, char *argv[]) {
        const char *peeked_name;
        const Verb *peeked;
        int r;

        *args = (Args) { .timeout_usec = UINT64_MAX };

        peeked_name = peek_verb(argc, argv);
        peeked = peeked_name ? find_verb(peeked_name) : NULL;

        r = parse_argv_options(args, argc, argv, peeked);
        if (r <= 0)
                return r;

        if (args->target.host && args->target.address)
                return log_usage_error("-H and --address cannot be combined.");
        if (args->target.host && args->target.transport == BUS_TRANSPORT_USER)
                return log_usage_error("-H reaches the system bgrund of a host; --user cannot go with it.");

        if (args->n_words == 0)
                return log_usage_error("Missing command. See 'bgrun --help'.");
        if (!args->verb)
                return log_usage_error("Unknown command '%s'. See 'bgrun --help'.", args->words[0]);

        if (!args->verb->dispatch) { /* help [VERB] */
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

        return check_verb(args);
}
