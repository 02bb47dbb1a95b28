/* SPDX-License-Identifier: MIT */
/* bgrun run: a job launched, then its ID printed, or it attached to with
 * --wait. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "bgrun/bus-api.h"
#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output.h"
#include "print.h"
#include "record.h"
#include "run-env.h"
#include "run-limits.h"
#include "run-sandbox.h"
#include "time-util.h"
#include "verbs.h"
#include "deadline.h"
#include "shell-words.h"

/* One word after --: a shell command line, as it is. Several: an argv,
 * each word quoted for /bin/sh, so that the shell runs exactly those words
 * (how a bgrund without Argv is given them). */
char *command_from_words(char *const *words) {
        return words[0] && !words[1] ? strdup(words[0]) : shell_quote_words(words);
}

static int get_directory(const char *directory, char **ret) {
        _cleanup_free_ char *cwd = NULL;

        cwd = getcwd(NULL, 0);
        if (!cwd)
                return log_error_errno(errno, "Failed to get the current directory: %m");

        if (!directory) {
                *ret = TAKE_PTR(cwd);
                return 0;
        }
        if (directory[0] == '/') {
                *ret = strdup(directory);
                return *ret ? 0 : log_oom();
        }
        /* The daemon has its own working directory: send an absolute path. */
        if (asprintf(ret, "%s/%s", streq(cwd, "/") ? "" : cwd, directory) < 0)
                return log_oom();
        return 0;
}

/* Tells on stderr how a job we waited for ended, if not plainly. */
static void note_outcome(json_object *rec, const char *id) {
        char buf[128];

        if (record_timed_out(rec) || record_signal(rec) > 0) {
                format_outcome(rec, buf, sizeof buf);
                log_error("Job %s %s.", record_id(rec, id), buf);
        }
}

/* The Environment run sends, checked against bgrund's limits here, so that
 * the error says what to do. */
static int build_environment(const Args *args, const char ***ret) {
        _cleanup_free_ const char **env = NULL;
        RunEnvOptions o = {
                .clean = args->clean_env,
                .remote = bus_target_is_remote(&args->target),
                .other_user = launch_args_is_set(&args->launch, LAUNCH_OPTION_USER),
                .tty = args->tty,
                .setenv = args->launch.lists[LAUNCH_OPTION_ENVIRONMENT],
                .env_allow = args->env_allow,
        };
        size_t n, bytes = 0;
        int r;

        r = run_environment(environ, &o, &env, &n);
        if (r < 0)
                return log_oom();

        for (size_t i = 0; i < n; i++)
                bytes += strlen(env[i]) + 1;
        if (n > LAUNCH_ENVIRONMENT_MAX_ENTRIES || bytes > LAUNCH_ARRAY_MAX_BYTES) {
                log_error("The environment is too large for bgrund (%zu variables, %zu bytes; it takes at most %zu and %d "
                          "bytes): pass less, e.g. --clean-env with -E NAME=VALUE for what the job needs.",
                          n, bytes, LAUNCH_ENVIRONMENT_MAX_ENTRIES, LAUNCH_ARRAY_MAX_BYTES);
                return -E2BIG;
        }

        *ret = TAKE_PTR(env);
        return 0;
}

/* Options a bgrund one release older does not know: left out when it says
 * so (it created nothing), with what that means for the run. */
static const struct {
        LaunchOption option;
        const char *without; /* what leaving it out means */
} newer_options[] = {
        { LAUNCH_OPTION_LAUNCH_DEADLINE_USEC, "the job may still start if this run gives up waiting for it" },
        { LAUNCH_OPTION_REQUEST_ID, "running this line again may start the job again" },
        { LAUNCH_OPTION_ARGV, "its words go to /bin/sh, quoted" },
        { LAUNCH_OPTION_BIND_TO_CALLER, "the job is not bound to this bgrun and outlives it" },
};

/* Which of newer_options the error names as unknown: its bit, or 0. */
static LaunchOptionSet unknown_newer_option(const sd_bus_error *error) {
        if (!sd_bus_error_has_name(error, BGRUN_ERROR_INVALID_ARGS) || !error->message)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(newer_options); i++) {
                char quoted[64];
                snprintf(quoted, sizeof quoted, "Unknown option '%s'", launch_options[newer_options[i].option].name);
                if (strstr(error->message, quoted))
                        return LAUNCH_OPTION_BIT(newer_options[i].option);
        }
        return 0;
}

/* Launch's call for args: COMMAND, where, the environment, the options,
 * but those in leave_out (bits of LaunchOption). */
static int new_launch_call(sd_bus *bus, const Args *args, LaunchOptionSet leave_out, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *command = NULL, *directory = NULL;
        _cleanup_free_ const char **env = NULL;
        _cleanup_(launch_options_free_fields) JobSpec sandbox = {};
        LaunchArgs launch = args->launch;
        int r;

        /* Several words: a program and its arguments, exactly (Argv). */
        bool argv = args->words[1] && args->words[2] && !(leave_out & LAUNCH_OPTION_BIT(LAUNCH_OPTION_ARGV));
        command = argv ? strdup("") : command_from_words(args->words + 1);
        if (!command)
                return log_oom();
        if (argv)
                launch_args_set(&launch, LAUNCH_OPTION_ARGV, (LaunchValue) { .strv = args->words + 1 });

        /* Another host has none of our directories: its "/" unless -C says. */
        if (bus_target_is_remote(&args->target) && !args->directory) {
                directory = strdup("/");
                if (!directory)
                        return log_oom();
        } else {
                r = get_directory(args->directory, &directory);
                if (r < 0)
                        return r;
        }

        r = run_sandbox_prepare(&launch, args->sandbox, args->network, args->no_network, directory, &sandbox);
        if (r < 0)
                return r;

        r = build_environment(args, &env);
        if (r < 0)
                return r;
        if (env[0])
                launch_args_set(&launch, LAUNCH_OPTION_ENVIRONMENT, (LaunchValue) { .strv = (char *const *) env });
        else
                launch.set &= ~LAUNCH_OPTION_BIT(LAUNCH_OPTION_ENVIRONMENT); /* a copy: the list stays args' */

        /* --open-stdin: the same input, for bgrun send to write later. */
        if (args->stdin_forward || args->open_stdin)
                launch_args_set(&launch, LAUNCH_OPTION_STDIN, (LaunchValue) { .str = "pipe" });
        run_limits_prepare(&launch, args->wait, args->tty, args->strict_limits);
        /* Past the call deadline this run has given up: the job must not
         * start later behind its back. */
        uint64_t deadline = call_deadline_usec();
        if (deadline < UINT64_MAX / 4)
                launch_args_set(&launch, LAUNCH_OPTION_LAUNCH_DEADLINE_USEC,
                                (LaunchValue) { .u64 = now_realtime_usec() + deadline });
        unsigned short rows = 0, columns = 0;
        if (args->tty) {
                launch_args_set(&launch, LAUNCH_OPTION_TTY, (LaunchValue) { .u64 = 1 });
                if (attach_terminal_size(&rows, &columns) && rows > 0 && columns > 0) {
                        launch_args_set(&launch, LAUNCH_OPTION_TTY_ROWS, (LaunchValue) { .u64 = rows });
                        launch_args_set(&launch, LAUNCH_OPTION_TTY_COLUMNS, (LaunchValue) { .u64 = columns });
                }
        }

        launch.set &= ~leave_out;

        r = manager_new_call(bus, "Launch", &m, "sss", command, args->session ?: "", directory);
        if (r < 0)
                return r;
        r = launch_args_append(&launch, m);
        if (r < 0)
                return log_error_errno(r, "Failed to build Launch call: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

/* run --wait: the job's output (or its record) until it ends; its status. */
static int run_attached(sd_bus *bus, const Args *args, const char *id) {
        _cleanup_json_ json_object *rec = NULL;
        AttachOptions o = {
                .output = !args->json,
                .input = args->stdin_forward || args->tty,
                .tty = args->tty,
                .quiet = args->quiet,
        };
        int status, r;

        if (!args->quiet) {
                if (args->tty && isatty(STDIN_FILENO))
                        log_info("Running as job %s. Press ^] three times within 1s to detach.", id);
                else
                        log_info("Running as job %s.", id);
        }

        status = attach_job(bus, id, &o, &rec);
        if (status < 0 || !rec)
                return status;
        if (args->json) {
                r = print_json(rec);
                if (r < 0)
                        return r;
        } else
                note_outcome(rec, id);
        return status;
}

/* run without --wait: the ID (or the record), and with --stdin the input. */
static int run_detached(sd_bus *bus, const Args *args, const char *id) {
        int r = 0;

        if (args->json) {
                _cleanup_json_ json_object *rec = NULL;

                r = get_record(bus, id, &rec);
                if (r < 0)
                        return r;
                r = print_json(rec);
        } else if (puts(id) == EOF || fflush(stdout) == EOF)
                r = log_error_errno(errno, "Failed to write job id: %m");
        if (r < 0)
                return r;

        /* run --stdin: our stdin to the job until its end, then EOF. From a
         * terminal, the input stays open for bgrun send instead: typing it
         * here, with no --wait to show what the job makes of it, is not
         * what anyone wants. */
        if (args->open_stdin) {
                if (!args->quiet && isatty(STDERR_FILENO))
                        log_info("The input of job %s is open: bgrun send %s TEXT, bgrun send %s --eof.", id, id, id);
        } else if (args->stdin_forward && isatty(STDIN_FILENO)) {
                if (!args->quiet)
                        log_info("The input of job %s stays open: bgrun send %s TEXT, bgrun send %s --eof.", id, id, id);
        } else if (args->stdin_forward) {
                r = forward_input(bus, id, STDIN_FILENO);
                if (r < 0)
                        return r;
        }
        return EXIT_SUCCESS;
}

int verb_run(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const char *id, *path;
        int r;

        LaunchOptionSet leave_out = 0;
        r = new_launch_call(bus, args, leave_out, &m);
        if (r < 0)
                return r;

        /* An interrupt from here on stops the job we start. */
        if (args->wait) {
                r = attach_block_signals(args->tty);
                if (r < 0)
                        return r;
        }

        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        r = manager_call_raw(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), &error, &reply);
        /* An older bgrund refuses what it does not know, having created
         * nothing: it gets a call without it, once for each. */
        for (LaunchOptionSet bit; r < 0 && (bit = unknown_newer_option(&error)) && !(leave_out & bit);) {
                for (size_t i = 0; i < ELEMENTSOF(newer_options); i++)
                        if (bit == LAUNCH_OPTION_BIT(newer_options[i].option))
                                log_warning("This bgrund does not know %s (an older version): %s.",
                                            launch_options[newer_options[i].option].name, newer_options[i].without);
                leave_out |= bit;
                sd_bus_error_free(&error);
                m = sd_bus_message_unref(m);
                r = new_launch_call(bus, args, leave_out, &m);
                if (r < 0)
                        return r;
                r = manager_call_raw(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), &error, &reply);
        }
        if (r < 0)
                return log_call_error("Launch", NULL, &error, r);

        r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return log_parse_error("Launch", r);
        run_limits_note_unenforced(bus, id, &args->launch, args->strict_limits);

        return args->wait ? run_attached(bus, args, id) : run_detached(bus, args, id);
}
