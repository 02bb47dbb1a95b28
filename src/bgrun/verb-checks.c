/* SPDX-License-Identifier: MIT */
/* Each verb's own checks of its options together, past what the option
 * table says of each alone: named by the verb table (verb-table.c), run
 * by the command line (cmdline.c) once all options are read. */

#include <stdlib.h>

#include "cmdline.h"
#include "launch-text.h"
#include "log.h"
#include "macro.h"
#include "verb-checks.h"

/* BGRUN_SESSION: the session of run, list, kill with no ID and forget
 * --ended when -s does not name one (a CI job sets it once). */
static void session_from_environment(Args *args) {
        const char *e = getenv("BGRUN_SESSION");
        if (!args->session && e && e[0])
                args->session = e;
}

int check_run(Args *args) {
        session_from_environment(args);
        if (args->stdin_forward && args->tty)
                return log_usage_error("--stdin and --tty cannot be combined (a terminal is the job's input).");
        if (args->open_stdin && (args->stdin_forward || args->tty))
                return log_usage_error("--open-stdin cannot go with --stdin or --tty (it forwards nothing; "
                                       "bgrun send writes the input).");
        if (args->env_allow && args->clean_env)
                return log_usage_error("--env-allow cannot go with --clean-env (which passes none of this "
                                       "environment; use -E NAME=VALUE).");
        if (args->network && args->no_network)
                return log_usage_error("--network and --no-network cannot be combined.");
        const LaunchArgs *l = &args->launch;
        if (args->network && launch_args_is_set(l, LAUNCH_OPTION_ALLOWED_DOMAINS))
                return log_usage_error("--network and --allow-domain cannot be combined (--allow-domain: a network of "
                                       "the job's own that reaches those names only).");
        if (launch_args_is_set(l, LAUNCH_OPTION_QUEUE) && l->values[LAUNCH_OPTION_QUEUE].u64 && args->tty)
                return log_usage_error("--queue cannot go with --tty (a terminal job starts at once or not at all).");
        if (launch_args_is_set(l, LAUNCH_OPTION_MAX_PARALLEL) && !(args->session && args->session[0]))
                return log_usage_error("--parallel needs -s SESSION: it bounds that session's jobs.");
        /* -t means the wall-clock limit for run; -p MaxRuntimeUSec= is the same. */
        if ((args->options_seen & OPTION_TIMEOUT) && !launch_args_is_set(&args->launch, LAUNCH_OPTION_MAX_RUNTIME_USEC))
                launch_args_set(&args->launch, LAUNCH_OPTION_MAX_RUNTIME_USEC,
                                (LaunchValue) { .u64 = args->timeout_usec });
        return 1;
}

int check_logs(Args *args) {
        if ((args->options_seen & OPTION_OFFSET) && (args->options_seen & OPTION_LINES))
                return log_usage_error("logs takes --offset N or -n LINES, not both.");
        if (args->json && args->follow)
                return log_usage_error("logs --json gives what there is now, with next to go on from: "
                                       "call it again with --offset NEXT instead of -f.");
        return 1;
}

static const char *const job_statuses[] = { "queued", "running", "exited", "killed", "timed_out", "failed" };

int check_list(Args *args) {
        session_from_environment(args);
        if (!args->status)
                return 1;
        for (size_t i = 0; i < ELEMENTSOF(job_statuses); i++)
                if (streq(args->status, job_statuses[i]))
                        return 1;
        return log_usage_error("Unknown status '%s' (queued, running, exited, killed, timed_out, failed).", args->status);
}

int check_kill(Args *args) {
        size_t n_ids = args->n_words - 1;

        if (args->session && args->session_short)
                return log_usage_error("kill takes --session SESSION (no -s: in systemctl kill, -s is a signal).");
        if (args->session && n_ids > 0)
                return log_usage_error("kill takes job IDs or --session SESSION, not both.");
        if (n_ids == 0)
                session_from_environment(args);
        if (!args->session && n_ids == 0)
                return log_usage_error("Missing job ID: bgrun kill ID... | kill --session SESSION");
        if (args->session && !args->session[0])
                return log_usage_error("--session= needs a session.");
        return 1;
}

int check_forget(Args *args) {
        size_t n_ids = args->n_words - 1;

        if (args->ended && n_ids > 0)
                return log_usage_error("forget takes job IDs or --ended, not both.");
        if (!args->ended && n_ids == 0)
                return log_usage_error("Missing job ID: bgrun forget ID... | forget --ended");
        if (!args->ended && (args->options_seen & (OPTION_SESSION | OPTION_OLDER_THAN)))
                return log_usage_error("--session and --older-than go with forget --ended.");
        if (args->ended)
                session_from_environment(args);
        return 1;
}

int check_send(Args *args) {
        if (args->n_words == 2 && !args->eof)
                return log_usage_error("Missing what to send: bgrun send ID TEXT | send ID --eof");
        return 1;
}
