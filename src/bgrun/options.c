/* SPDX-License-Identifier: MIT */
/* The table of bgrun's options and what each does with its value. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "build-config.h"
#include "log.h"
#include "macro.h"
#include "launch-options.h"
#include "options.h"
#include "sandbox-profile.h"
#include "parse-util.h"
#include "strv.h"

static int parse_help(Args *args, const char *value, bool short_form) {
        if (args->peeked)
                print_verb_help(args->peeked);
        else
                print_help();
        return 0;
}

static int parse_version(Args *args, const char *value, bool short_form) {
        printf("bgrun %s\n", BGRUN_VERSION);
        return 0;
}

static int parse_user(Args *args, const char *value, bool short_form) {
        args->target.transport = BUS_TRANSPORT_USER;
        args->target.transport_given = true;
        return 1;
}

static int parse_system(Args *args, const char *value, bool short_form) {
        args->target.transport = BUS_TRANSPORT_SYSTEM;
        args->target.transport_given = true;
        return 1;
}

static int parse_host(Args *args, const char *value, bool short_form) {
        if (!value[0])
                return log_usage_error("-H needs a host: [USER@]HOST.");
        args->target.host = value;
        return 1;
}

static int parse_address(Args *args, const char *value, bool short_form) {
        if (!value[0])
                return log_usage_error("--address= needs a D-Bus address.");
        args->target.address = value;
        return 1;
}

int parse_call_timeout(Args *args, const char *value, bool short_form) {
        int r = parse_duration_arg(value, "--call-timeout", &args->call_timeout_usec);
        if (r < 0)
                return r;
        if (args->call_timeout_usec == 0)
                return log_usage_error("--call-timeout must be more than 0 (e.g. 30s).");
        return 1;
}

static int parse_session(Args *args, const char *value, bool short_form) {
        args->session = value;
        args->session_short = short_form;
        return 1;
}

static int parse_directory(Args *args, const char *value, bool short_form) {
        if (!value[0])
                return log_usage_error("--directory= needs a directory.");
        args->directory = value;
        return 1;
}

static int parse_timeout(Args *args, const char *value, bool short_form) {
        /* run: MaxRuntimeUSec; wait: how long to wait. */
        int r = parse_duration_arg(value, "--timeout", &args->timeout_usec);
        if (r < 0)
                return r;
        args->timeout_string = value;
        return 1;
}

static int parse_setenv(Args *args, const char *value, bool short_form) {
        return launch_args_add_environment(&args->launch, (char *) value) ?: 1; /* a pointer into argv */
}

static int parse_property(Args *args, const char *value, bool short_form) {
        return launch_args_parse_property(&args->launch, value) ?: 1;
}

static int parse_signal_option(Args *args, const char *value, bool short_form) {
        int sig = parse_signal(value);
        if (sig < 0)
                return log_usage_error("Invalid signal '%s' (a name as TERM or SIGINT, or a number).", value);
        args->signal = sig;
        return 1;
}

static int parse_grace(Args *args, const char *value, bool short_form) {
        return parse_duration_arg(value, "--grace", &args->grace_usec) ?: 1;
}

static int parse_older_than(Args *args, const char *value, bool short_form) {
        return parse_duration_arg(value, "--older-than", &args->older_than_usec) ?: 1;
}

static int parse_lines(Args *args, const char *value, bool short_form) {
        if (parse_uint64_strict(value, &args->lines, NULL) < 0)
                return log_usage_error("Invalid number of lines '%s'.", value);
        return 1;
}

static int parse_offset(Args *args, const char *value, bool short_form) {
        if (parse_uint64_strict(value, &args->offset, NULL) < 0)
                return log_usage_error("Invalid offset '%s' (a byte offset, as next in logs --json).", value);
        return 1;
}

static int parse_status(Args *args, const char *value, bool short_form) {
        if (!value[0])
                return log_usage_error("--status= needs a status (running, exited, failed, killed, ...).");
        args->status = value;
        return 1;
}

static int parse_sandbox(Args *args, const char *value, bool short_form) {
        int p = sandbox_profile_from_string(value);
        if (p < 0)
                return log_usage_error("Invalid --sandbox '%s' (off, workspace or read-only).", value);
        args->sandbox = p;
        return 1;
}

static int parse_workspace(Args *args, const char *value, bool short_form) {
        if (!value[0])
                return log_usage_error("--workspace needs a directory.");
        args->workspace = value;
        return 1;
}

static int parse_writable(Args *args, const char *value, bool short_form) {
        if (value[0] != '/')
                return log_usage_error("--writable needs an absolute directory, not '%s'.", value);
        return strv_push(&args->writable, &args->n_writable, (char *) value) < 0 ? log_oom() : 1;
}

static int parse_env_allow(Args *args, const char *value, bool short_form) {
        if (!value[0] || strchr(value, '='))
                return log_usage_error("--env-allow takes a variable's NAME, not '%s'.", value);
        return strv_push(&args->env_allow, &args->n_env_allow, (char *) value) < 0 ? log_oom() : 1;
}

static int parse_output_limit(Args *args, const char *value, bool short_form) {
        uint64_t limit;

        if (parse_size_bytes(value, &limit) < 0 || limit < 1024 || limit > 64 * 1024 * 1024)
                return log_usage_error("Invalid --output-limit '%s' (bytes, 1K to 64M).", value);
        args->output_limit = (size_t) limit;
        return 1;
}

/* A global option: any verb, no OptionFlag. */
#define GLOBAL(name, short_name, argument, parse) { name, short_name, argument, 0, 0, 0, parse }
/* An option with a value, parsed. */
#define VALUE(name, short_name, flag, verbs, parse) { name, short_name, true, flag, verbs, 0, parse }
/* A switch: sets a bool of Args. */
#define SWITCH(name, short_name, flag, verbs, field) { name, short_name, false, flag, verbs, offsetof(Args, field), NULL }
/* A Launch option given with a value of its own, or set to value by a switch. */
#define LAUNCH_VALUE(name, verbs, option) { name, 0, true, 0, verbs, 0, NULL, LAUNCH_OPTION_##option + 1, 0 }
#define LAUNCH_SWITCH(name, verbs, option, value) { name, 0, false, 0, verbs, 0, NULL, LAUNCH_OPTION_##option + 1, value }

/* Of several options a verb does not take, the first here is named. -n is
 * two options: LINES for logs, a switch for send. */
const Option options[] = {
        GLOBAL("help", 'h', false, parse_help),
        GLOBAL("version", 0, false, parse_version),
        GLOBAL("user", 0, false, parse_user),
        GLOBAL("system", 0, false, parse_system),
        GLOBAL("host", 'H', true, parse_host),
        GLOBAL("address", 0, true, parse_address),
        GLOBAL("call-timeout", 0, true, parse_call_timeout),
        VALUE("session", 's', OPTION_SESSION, VERB_RUN | VERB_KILL | VERB_LIST | VERB_FORGET | VERB_MCP, parse_session),
        VALUE("directory", 'C', OPTION_DIRECTORY, VERB_RUN, parse_directory),
        VALUE("timeout", 't', OPTION_TIMEOUT, VERB_RUN | VERB_WAIT, parse_timeout),
        VALUE("setenv", 'E', OPTION_SETENV, VERB_RUN, parse_setenv),
        VALUE("property", 'p', OPTION_PROPERTY, VERB_RUN, parse_property),
        SWITCH("wait", 0, OPTION_WAIT, VERB_RUN, wait),
        SWITCH("json", 0, OPTION_JSON,
               VERB_RUN | VERB_STATUS | VERB_LOGS | VERB_STOP | VERB_KILL | VERB_LIST | VERB_WAIT | VERB_REAP, json),
        SWITCH("follow", 'f', OPTION_FOLLOW, VERB_LOGS, follow),
        SWITCH("quiet", 'q', OPTION_QUIET, VERB_RUN, quiet),
        SWITCH("clean-env", 0, OPTION_CLEAN_ENV, VERB_RUN, clean_env),
        SWITCH("stdin", 0, OPTION_STDIN, VERB_RUN, stdin_forward),
        SWITCH("tty", 0, OPTION_TTY, VERB_RUN, tty),
        VALUE("signal", 0, OPTION_SIGNAL, VERB_STOP, parse_signal_option),
        VALUE("grace", 0, OPTION_GRACE, VERB_STOP, parse_grace),
        SWITCH("any", 0, OPTION_ANY, VERB_WAIT, any),
        SWITCH("ended", 0, OPTION_ENDED, VERB_FORGET, ended),
        VALUE("older-than", 0, OPTION_OLDER_THAN, VERB_FORGET, parse_older_than),
        VALUE("lines", 'n', OPTION_LINES, VERB_LOGS, parse_lines),
        SWITCH(NULL, 'n', OPTION_NO_NEWLINE, VERB_SEND, no_newline),
        SWITCH("eof", 0, OPTION_EOF, VERB_SEND, eof),
        SWITCH("strict-limits", 0, OPTION_STRICT_LIMITS, VERB_RUN, strict_limits),
        VALUE("offset", 0, OPTION_OFFSET, VERB_LOGS, parse_offset),
        SWITCH("plain", 0, OPTION_PLAIN, VERB_LOGS, plain),
        SWITCH("open-stdin", 0, OPTION_OPEN_STDIN, VERB_RUN, open_stdin),
        VALUE("status", 0, OPTION_STATUS, VERB_LIST, parse_status),
        VALUE("env-allow", 0, OPTION_ENV_ALLOW, VERB_RUN, parse_env_allow),
        SWITCH("keep-jobs", 0, OPTION_KEEP_JOBS, VERB_MCP, keep_jobs),
        VALUE("output-limit", 0, OPTION_OUTPUT_LIMIT, VERB_MCP, parse_output_limit),
        LAUNCH_VALUE("request-id", VERB_RUN, REQUEST_ID),
        VALUE("sandbox", 0, OPTION_SANDBOX, VERB_RUN | VERB_MCP, parse_sandbox),
        SWITCH("network", 0, OPTION_NETWORK, VERB_RUN | VERB_MCP, network),
        SWITCH("no-network", 0, OPTION_NO_NETWORK, VERB_RUN, no_network),
        VALUE("workspace", 0, OPTION_WORKSPACE, VERB_MCP, parse_workspace),
        VALUE("writable", 0, OPTION_WRITABLE, VERB_MCP, parse_writable),
        SWITCH("no-protect-git", 0, OPTION_NO_PROTECT_GIT, VERB_MCP, no_protect_git),
        LAUNCH_SWITCH("queue", VERB_RUN, QUEUE, 1),
        LAUNCH_VALUE("parallel", VERB_RUN, MAX_PARALLEL),
        LAUNCH_VALUE("allow-domain", VERB_RUN | VERB_MCP, ALLOWED_DOMAINS),
};

const size_t n_options = ELEMENTSOF(options);
_Static_assert(ELEMENTSOF(options) <= OPTIONS_MAX, "OPTIONS_MAX is too small for the table");

int option_apply(const Option *o, Args *args, const char *value, bool short_form) {
        int r = 1;

        if (o->parse)
                r = o->parse(args, value, short_form);
        else if (o->launch && o->argument) {
                char what[64];
                snprintf(what, sizeof what, "--%s", o->name);
                r = launch_args_parse_value(&args->launch, o->launch - 1, what, value) ?: 1;
        } else if (o->launch)
                launch_args_set(&args->launch, o->launch - 1, (LaunchValue) { .u64 = o->launch_value });
        else
                *(bool *) ((char *) args + o->field) = true;
        if (r > 0) {
                args->options_seen |= o->flag;
                args->rows_seen |= UINT64_C(1) << (o - options);
        }
        return r;
}
