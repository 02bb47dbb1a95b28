/* SPDX-License-Identifier: MIT */
/* bgrun's command line, parsed without a bus: which verb, which words, which
 * options, and the usage errors word for word. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "build-config.h"
#include "cmdline.h"
#include "log.h"
#include "macro.h"
#include "run-env.h"
#include "verbs.h"

static Args args;

static void setup(void) {
        log_setup("bgrun", LOG_TARGET_CONSOLE);
        cr_redirect_stdout();
        cr_redirect_stderr();
}

static void teardown(void) {
        args_done(&args);
}

TestSuite(cmdline, .init = setup, .fini = teardown);

static int parse_v(char **argv) {
        int argc = 0;

        while (argv[argc])
                argc++;
        return parse_argv(&args, argc, argv);
}
#define PARSE(...) parse_v((char *[]) { "bgrun", __VA_ARGS__, NULL })

/* A usage error: -EINVAL and exactly this line on stderr. */
static void expect_usage_error(int r, const char *line) {
        char want[512];

        cr_assert_eq(r, -EINVAL, "parse_argv() = %d", r);
        snprintf(want, sizeof want, "bgrun: %s\n", line);
        fflush(stderr);
        cr_assert_stderr_eq_str(want);
}

static uint64_t max_runtime(void) {
        cr_assert(launch_args_is_set(&args.launch, LAUNCH_OPTION_MAX_RUNTIME_USEC));
        return args.launch.values[LAUNCH_OPTION_MAX_RUNTIME_USEC].u64;
}

/* A bare bgrun, as git and pueue: what there is to run, as a usage error. */
Test(cmdline, a_bare_bgrun_shows_the_short_help) {
        char *argv[] = { "bgrun", NULL };
        char *want = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&want, &n);
        cr_assert_not_null(f);
        print_short_help(f);
        fclose(f);
        cr_assert_not_null(strstr(want, "Commands:\n  run "), "the verbs: %s", want);
        cr_assert_not_null(strstr(want, "See 'bgrun help VERB'"), "where a verb's help is: %s", want);
        cr_assert_null(strstr(want, "--call-timeout"), "short: no options: %s", want);

        cr_assert_eq(parse_v(argv), -EINVAL);
        fflush(stderr);
        cr_assert_stderr_eq_str(want);
        free(want);
}

Test(cmdline, unknown_command) {
        expect_usage_error(PARSE("frobnicate"), "Unknown command 'frobnicate'. See 'bgrun --help'.");
}

Test(cmdline, missing_job_id) {
        expect_usage_error(PARSE("status"), "Missing job ID: bgrun status ID");
}

Test(cmdline, missing_job_id_names_the_alias_used) {
        expect_usage_error(PARSE("show", "--json"), "Missing job ID: bgrun show ID");
}

Test(cmdline, missing_command_to_run) {
        expect_usage_error(PARSE("run", "-s", "x"), "Missing the command to run: bgrun run [OPTIONS] -- COMMAND...");
}

Test(cmdline, too_many_arguments) {
        expect_usage_error(PARSE("status", "a", "b"), "Too many arguments for 'status'. See 'bgrun status --help'.");
}

Test(cmdline, too_many_arguments_for_list) {
        expect_usage_error(PARSE("ls", "x"), "Too many arguments for 'ls'. See 'bgrun ls --help'.");
}

Test(cmdline, json_does_not_apply_to_send) {
        expect_usage_error(PARSE("send", "abc", "hi", "--json"), "Option --json does not apply to 'send'.");
}

/* Issue #25: the command line as a program's interface. */
Test(cmdline, logs_offset_json_plain) {
        cr_assert_gt(PARSE("logs", "abc", "--offset", "4096", "--json", "--plain"), 0);
        cr_assert(args.options_seen & OPTION_OFFSET);
        cr_assert_eq(args.offset, 4096);
        cr_assert(args.json && args.plain);
}

Test(cmdline, logs_offset_is_a_number) {
        expect_usage_error(PARSE("logs", "abc", "--offset", "-1"),
                           "Invalid offset '-1' (a byte offset, as next in logs --json).");
}

Test(cmdline, logs_offset_and_lines_conflict) {
        expect_usage_error(PARSE("logs", "abc", "--offset", "3", "-n", "2"),
                           "logs takes --offset N or -n LINES, not both.");
}

Test(cmdline, logs_follow_json_conflict) {
        expect_usage_error(PARSE("logs", "abc", "-f", "--json"),
                           "logs --json gives what there is now, with next to go on from: call it again with "
                           "--offset NEXT instead of -f.");
}

Test(cmdline, list_status) {
        cr_assert_gt(PARSE("list", "--status", "running", "--json"), 0);
        cr_assert_str_eq(args.status, "running");
}

Test(cmdline, list_status_unknown) {
        expect_usage_error(PARSE("list", "--status", "gone"),
                           "Unknown status 'gone' (queued, running, exited, killed, timed_out, failed).");
}

Test(cmdline, open_stdin) {
        cr_assert_gt(PARSE("run", "--open-stdin", "--", "cat"), 0);
        cr_assert(args.open_stdin);
}

Test(cmdline, open_stdin_and_stdin_conflict) {
        expect_usage_error(PARSE("run", "--open-stdin", "--stdin", "--", "cat"),
                           "--open-stdin cannot go with --stdin or --tty (it forwards nothing; bgrun send writes "
                           "the input).");
}

Test(cmdline, env_allow_repeats) {
        cr_assert_gt(PARSE("run", "--env-allow", "GH_PAT", "--env-allow=SSH_AUTH_SOCK", "--", "true"), 0);
        cr_assert_eq(args.n_env_allow, 2);
        cr_assert_str_eq(args.env_allow[0], "GH_PAT");
        cr_assert_str_eq(args.env_allow[1], "SSH_AUTH_SOCK");
        cr_assert_null(args.env_allow[2]);
}

Test(cmdline, env_allow_takes_a_name) {
        expect_usage_error(PARSE("run", "--env-allow", "A=b", "--", "true"),
                           "--env-allow takes a variable's NAME, not 'A=b'.");
}

Test(cmdline, env_allow_and_clean_env_conflict) {
        expect_usage_error(PARSE("run", "--env-allow", "A", "--clean-env", "--", "true"),
                           "--env-allow cannot go with --clean-env (which passes none of this environment; use "
                           "-E NAME=VALUE).");
}

Test(cmdline, call_timeout) {
        cr_assert_gt(PARSE("--call-timeout", "2s", "list"), 0);
        cr_assert_eq(args.call_timeout_usec, 2 * USEC_PER_SEC);
}

Test(cmdline, call_timeout_from_the_environment_and_overridden) {
        setenv("BGRUN_CALL_TIMEOUT", "5s", 1);
        cr_assert_gt(PARSE("list"), 0);
        cr_assert_eq(args.call_timeout_usec, 5 * USEC_PER_SEC);
        args_done(&args);
        cr_assert_gt(PARSE("list", "--call-timeout=1s"), 0);
        cr_assert_eq(args.call_timeout_usec, USEC_PER_SEC);
        unsetenv("BGRUN_CALL_TIMEOUT");
}

Test(cmdline, call_timeout_zero) {
        expect_usage_error(PARSE("--call-timeout", "0", "list"), "--call-timeout must be more than 0 (e.g. 30s).");
}

Test(cmdline, attach_takes_one_id) {
        cr_assert_gt(PARSE("attach", "abc"), 0);
        cr_assert_str_eq(args.verb->name, "attach");
        args_done(&args);
        expect_usage_error(PARSE("attach"), "Missing job ID: bgrun attach ID");
}

Test(cmdline, property_does_not_apply_to_wait) {
        expect_usage_error(PARSE("wait", "-p", "MemoryMax=1", "abc"), "Option --property does not apply to 'wait'.");
}

Test(cmdline, timeout_does_not_apply_to_list) {
        expect_usage_error(PARSE("list", "-t", "5s"), "Option --timeout does not apply to 'list'.");
}

Test(cmdline, unknown_options) {
        expect_usage_error(PARSE("-x"), "Unknown option '-x'. See 'bgrun --help'.");
}

/* An unknown option after a verb points at that verb's help. */
Test(cmdline, unknown_long_option) {
        expect_usage_error(PARSE("status", "--bogus", "abc"), "Unknown option '--bogus' for 'status'. See 'bgrun help status'.");
}

Test(cmdline, unknown_short_option_of_a_verb) {
        expect_usage_error(PARSE("run", "-Z", "--", "true"), "Unknown option '-Z' for 'run'. See 'bgrun help run'.");
}

Test(cmdline, option_needs_argument) {
        expect_usage_error(PARSE("status", "abc", "-s"), "Option '-s' needs an argument.");
}

Test(cmdline, long_option_needs_argument) {
        /* getopt names the short form of a long option that has one. */
        expect_usage_error(PARSE("list", "--session"), "Option '-s' needs an argument.");
}

Test(cmdline, bad_timeout) {
        expect_usage_error(PARSE("wait", "-t", "soon", "abc"),
                           "Invalid duration 'soon' for --timeout (try e.g. 90, 90s, 5min, 1h30min).");
}

Test(cmdline, empty_directory) {
        expect_usage_error(PARSE("run", "-C", "", "--", "true"), "--directory= needs a directory.");
}

Test(cmdline, bad_environment) {
        expect_usage_error(PARSE("run", "-E", "NOVALUE", "--", "true"),
                           "Invalid environment assignment 'NOVALUE', expected NAME=VALUE.");
}

Test(cmdline, timeout_means_max_runtime_for_run) {
        cr_assert_eq(PARSE("run", "-t", "5min", "--", "sleep", "1"), 1);
        cr_assert_eq(args.verb->dispatch, verb_run);
        cr_assert_eq(args.timeout_usec, 300 * USEC_PER_SEC);
        cr_assert_eq(max_runtime(), 300 * USEC_PER_SEC);
        cr_assert_eq(args.n_words, 3);
        cr_assert_str_eq(args.words[0], "run");
        cr_assert_str_eq(args.words[1], "sleep");
        cr_assert_str_eq(args.words[2], "1");
        cr_assert_null(args.words[3]);
}

Test(cmdline, property_max_runtime_wins_over_timeout) {
        cr_assert_eq(PARSE("run", "-p", "MaxRuntimeUSec=1min", "-t", "5min", "--", "true"), 1);
        cr_assert_eq(max_runtime(), 60 * USEC_PER_SEC);
}

Test(cmdline, property_max_runtime_wins_given_later) {
        cr_assert_eq(PARSE("run", "-t", "5min", "-p", "MaxRuntimeUSec=1min", "--", "true"), 1);
        cr_assert_eq(max_runtime(), 60 * USEC_PER_SEC);
}

Test(cmdline, timeout_for_wait_is_how_long_to_wait) {
        cr_assert_eq(PARSE("wait", "abc", "-t", "10s", "--json"), 1);
        cr_assert_eq(args.verb->dispatch, verb_wait);
        cr_assert_eq(args.timeout_usec, 10 * USEC_PER_SEC);
        cr_assert_str_eq(args.timeout_string, "10s");
        cr_assert(args.json);
        cr_assert_not(launch_args_is_set(&args.launch, LAUNCH_OPTION_MAX_RUNTIME_USEC));
}

Test(cmdline, no_timeout_is_infinity) {
        cr_assert_eq(PARSE("wait", "abc"), 1);
        cr_assert_eq(args.timeout_usec, UINT64_MAX);
        cr_assert_null(args.timeout_string);
}

Test(cmdline, options_after_the_command_belong_to_it) {
        cr_assert_eq(PARSE("run", "-s", "build", "echo", "--json", "-t", "5"), 1);
        cr_assert_not(args.json);
        cr_assert_eq(args.options_seen, OPTION_SESSION);
        cr_assert_str_eq(args.session, "build");
        cr_assert_eq(args.n_words, 5);
        cr_assert_str_eq(args.words[2], "--json");
        cr_assert_str_eq(args.words[4], "5");
}

Test(cmdline, after_dashes_everything_is_the_command) {
        cr_assert_eq(PARSE("run", "--wait", "--", "-x", "--json"), 1);
        cr_assert(args.wait);
        cr_assert_not(args.json);
        cr_assert_eq(args.n_words, 3);
        cr_assert_str_eq(args.words[1], "-x");
}

Test(cmdline, other_verbs_take_options_after_their_arguments) {
        cr_assert_eq(PARSE("logs", "abc", "-f"), 1);
        cr_assert_eq(args.verb->dispatch, verb_logs);
        cr_assert(args.follow);
        cr_assert_str_eq(args.words[1], "abc");
}

Test(cmdline, aliases) {
        cr_assert_eq(PARSE("show", "abc"), 1);
        cr_assert_eq(args.verb->dispatch, verb_status);
        cr_assert_str_eq(args.verb->name, "show");
        args_done(&args);

        /* Parsing again in one process starts afresh (getopt's state too). */
        cr_assert_eq(PARSE("ls", "--json"), 1);
        cr_assert_eq(args.verb->dispatch, verb_list);
        cr_assert(args.json);
}

Test(cmdline, run_options) {
        cr_assert_eq(PARSE("run", "-s", "s1", "-C", "sub", "-E", "A=1", "--setenv=B=2", "-p", "TasksMax=8", "--wait",
                           "--json", "--", "make"),
                     1);
        cr_assert_str_eq(args.session, "s1");
        cr_assert_str_eq(args.directory, "sub");
        cr_assert(args.wait);
        cr_assert(args.json);
        cr_assert_eq(args.launch.n_lists[LAUNCH_OPTION_ENVIRONMENT], 2);
        cr_assert_str_eq(args.launch.lists[LAUNCH_OPTION_ENVIRONMENT][1], "B=2");
        cr_assert(launch_args_is_set(&args.launch, LAUNCH_OPTION_ENVIRONMENT));
        cr_assert_eq(args.launch.values[LAUNCH_OPTION_TASKS_MAX].u64, 8);
        cr_assert_not(launch_args_is_set(&args.launch, LAUNCH_OPTION_MAX_RUNTIME_USEC));
}

Test(cmdline, help) {
        cr_assert_eq(PARSE("--help"), 0);
        fflush(stdout);
        cr_assert_stdout_neq_str("");
}

Test(cmdline, help_starts_with_usage) {
        char buf[64] = "";
        FILE *f;

        cr_assert_eq(PARSE("--help"), 0);
        fflush(stdout);
        f = cr_get_redirected_stdout();
        cr_assert_not_null(fgets(buf, sizeof buf, f));
        cr_assert_str_eq(buf, "bgrun [OPTIONS...] COMMAND ...\n");
}

Test(cmdline, verb_help_is_that_verbs) {
        char buf[64] = "";
        FILE *f;

        cr_assert_eq(PARSE("status", "-h"), 0);
        fflush(stdout);
        f = cr_get_redirected_stdout();
        cr_assert_not_null(fgets(buf, sizeof buf, f));
        cr_assert_str_eq(buf, "bgrun status ID [--json]\n");
}

Test(cmdline, help_verb) {
        char buf[64] = "";
        FILE *f;

        cr_assert_eq(PARSE("help", "kill"), 0);
        fflush(stdout);
        f = cr_get_redirected_stdout();
        cr_assert_not_null(fgets(buf, sizeof buf, f));
        cr_assert_str_eq(buf, "bgrun kill ID... | --session SESSION [--json]\n");
}

Test(cmdline, kill_session_has_no_short_form) {
        expect_usage_error(PARSE("kill", "-s", "build"),
                           "kill takes --session SESSION (no -s: in systemctl kill, -s is a signal).");
}

Test(cmdline, kill_session_and_several_ids) {
        cr_assert_eq(PARSE("kill", "--session", "build"), 1);
        cr_assert_str_eq(args.session, "build");
        args_done(&args);
        cr_assert_eq(PARSE("kill", "a", "b", "c"), 1);
        cr_assert_eq(args.n_words, 4);
}

Test(cmdline, n_is_lines_for_logs_and_a_flag_for_send) {
        cr_assert_eq(PARSE("logs", "-n", "5", "abc"), 1);
        cr_assert_eq(args.lines, 5);
        cr_assert(args.options_seen & OPTION_LINES);
        cr_assert_str_eq(args.words[1], "abc");
        args_done(&args);
        cr_assert_eq(PARSE("send", "-n", "abc", "text"), 1);
        cr_assert(args.no_newline);
        cr_assert_eq(args.n_words, 3);
        args_done(&args);
        cr_assert_eq(PARSE("--user", "send", "abc", "--eof"), 1);
        cr_assert(args.eof);
        cr_assert(args.target.transport == BUS_TRANSPORT_USER);
}

Test(cmdline, global_options_before_the_verb) {
        cr_assert_eq(PARSE("-H", "me@host", "stop", "a", "--signal", "INT", "--grace", "2s"), 1);
        cr_assert_str_eq(args.target.host, "me@host");
        cr_assert_eq(args.signal, 2);
        cr_assert_eq(args.grace_usec, 2 * USEC_PER_SEC);
}

Test(cmdline, forget_ended_or_ids) {
        expect_usage_error(PARSE("forget", "--ended", "abc"), "forget takes job IDs or --ended, not both.");
}

Test(cmdline, command_words) {
        char *one[] = { "echo $FOO && true", NULL };
        char *several[] = { "python3", "-c", "print('x y')", "", NULL };
        _cleanup_free_ char *a = command_from_words(one), *b = command_from_words(several);

        cr_assert_str_eq(a, "echo $FOO && true");
        cr_assert_str_eq(b, "python3 -c 'print('\\''x y'\\'')' ''");
}

Test(cmdline, version) {
        cr_assert_eq(PARSE("--version"), 0);
        fflush(stdout);
        cr_assert_stdout_eq_str("bgrun " BGRUN_VERSION "\n");
}

/* run's environment (run-env.c): what of the caller's goes to the job. */
Test(cmdline, run_environment_filters_and_overrides) {
        char *caller[] = { "PATH=/venv/bin:/usr/bin", "FOO=bar", "MY_API_KEY=x", "github_token=y",
                           "DbPassword=z", "AWS_SECRET_ACCESS_KEY=w", "NOTIFY_SOCKET=/run/n", "LISTEN_FDS=1",
                           "JOURNAL_STREAM=1:2", "INVOCATION_ID=abc", "BGRUN_ADDRESS=unix:path=/x",
                           "BASH_FUNC_f%%=() { :; }", "HOME=/root", "TERM=xterm", NULL };
        char *setenv_[] = { "FOO=override", "NEW=1", NULL };
        RunEnvOptions o = { .setenv = setenv_ };
        _cleanup_free_ const char **env = NULL;
        size_t n;

        cr_assert_eq(run_environment(caller, &o, &env, &n), 0);
        cr_assert_eq(n, 5);
        cr_assert_str_eq(env[0], "PATH=/venv/bin:/usr/bin");
        cr_assert_str_eq(env[1], "FOO=override");
        cr_assert_str_eq(env[2], "HOME=/root");
        cr_assert_str_eq(env[3], "TERM=xterm");
        cr_assert_str_eq(env[4], "NEW=1");
        cr_assert_null(env[5]);
}

Test(cmdline, run_environment_clean_user_tty) {
        char *caller[] = { "FOO=bar", "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/bash", NULL };
        char *nothing[] = { NULL };
        _cleanup_free_ const char **a = NULL, **b = NULL;
        RunEnvOptions clean = { .clean = true, .tty = true, .setenv = nothing };
        RunEnvOptions user = { .other_user = true };
        size_t n;

        cr_assert_eq(run_environment(caller, &clean, &a, &n), 0);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(a[0], "TERM=vt220");
        cr_assert_eq(run_environment(caller, &user, &b, &n), 0);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(b[0], "FOO=bar");
}
