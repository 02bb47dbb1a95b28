/* SPDX-License-Identifier: MIT */
/* What a Launch asks, without a bus (launch-request.c): the arguments'
 * bounds, each refusal with why, and the spec's defaults. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launch-options.h"
#include "launch-request.h"
#include "macro.h"

static void expect_refused(const LaunchRequest *req, const char *why) {
        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_request_check(req, &message), -EINVAL);
        cr_assert_not_null(message);
        cr_assert(strstr(message, why), "'%s' does not say '%s'", message, why);
}

Test(launch_request, bounds_of_the_arguments) {
        expect_refused(&(LaunchRequest) { .command = "true", .session = "", .cwd = "tmp" }, "cwd 'tmp' is not an absolute path");
        char session[258];
        memset(session, 's', sizeof session - 1);
        session[sizeof session - 1] = 0;
        expect_refused(&(LaunchRequest) { .command = "true", .session = session, .cwd = "/" }, "session name");

        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_request_check(&(LaunchRequest) { .command = "true", .session = "", .cwd = "/" }, &message), 0);
        cr_assert_null(message);
}

/* A shell command line, or "" with Argv; the record shows Argv's words as
 * a command line the shell reads back as those words. */
Test(launch_request, the_command_or_argv) {
        LaunchRequest empty = { .command = "", .session = "", .cwd = "/" }, line = { .command = "ls", .session = "", .cwd = "/" };
        _cleanup_(launch_options_done) LaunchOptions o;
        launch_options_init(&o);
        _cleanup_free_ char *m1 = NULL, *m2 = NULL;
        cr_assert_eq(launch_request_command(&empty, &o, &m1), -EINVAL);
        cr_assert(strstr(m1, "empty"), "%s", m1);
        cr_assert_eq(launch_request_command(&line, &o, &m1), 0);

        char *words[] = { "printf", "%s|", "a b", "$HOME", "*", "it's", NULL };
        cr_assert_eq(launch_options_set(&o, "Argv", &(LaunchValue) { .signature = "as", .strv = words }, &m2), 0);
        cr_assert_eq(launch_request_command(&line, &o, &m2), -EINVAL);
        cr_assert(strstr(m2, "Argv"), "%s", m2);
        _cleanup_(job_spec_done) JobSpec spec = {};
        _cleanup_free_ char *m3 = NULL;
        cr_assert_eq(launch_request_spec(NULL, &empty, &o, &spec, &m3), 0);
        cr_assert_str_eq(spec.command, "printf '%s|' 'a b' '$HOME' '*' 'it'\\''s'");
        cr_assert_str_eq(spec.argv[5], "it's");
}

Test(launch_request, an_unknown_user_is_refused) {
        _cleanup_(launch_options_done) LaunchOptions o;
        launch_options_init(&o);
        o.spec.user = strdup("bgrun-no-such-user");
        _cleanup_(job_spec_done) JobSpec spec = {};
        _cleanup_free_ char *message = NULL;
        LaunchRequest req = { .command = "true", .session = "", .cwd = "/" };
        cr_assert_eq(launch_request_spec(NULL, &req, &o, &spec, &message), -EINVAL);
        cr_assert_str_eq(message, "Option User: no such user 'bgrun-no-such-user'");
}

Test(launch_request, the_spec_has_the_callers_identity_and_the_defaults) {
        _cleanup_(launch_options_done) LaunchOptions o;
        launch_options_init(&o);
        _cleanup_(job_spec_done) JobSpec spec = {};
        _cleanup_free_ char *message = NULL;
        LaunchRequest req = { .command = "echo hi", .session = "s1", .cwd = "/tmp", .uid = 0 };
        cr_assert_eq(launch_request_spec(NULL, &req, &o, &spec, &message), 0);
        cr_assert_null(message);
        cr_assert_eq(spec.owner, 0);
        cr_assert_eq(spec.uid, 0);
        cr_assert_str_eq(spec.user, "root");
        cr_assert_str_eq(spec.command, "echo hi");
        cr_assert_str_eq(spec.session_id, "s1");
        cr_assert_str_eq(spec.cwd, "/tmp");
        cr_assert_eq(spec.stop_signal, launch_options[LAUNCH_OPTION_STOP_SIGNAL].default_value);
        cr_assert_eq(spec.stop_grace_usec, launch_options[LAUNCH_OPTION_STOP_GRACE_USEC].default_value);
        cr_assert_eq(spec.stdin_mode, JOB_STDIN_NULL);
        cr_assert_eq(spec.tty_rows, launch_options[LAUNCH_OPTION_TTY_ROWS].default_value);
        cr_assert_eq(spec.tty_columns, launch_options[LAUNCH_OPTION_TTY_COLUMNS].default_value);
        cr_assert_str_eq(spec.parent, "");
}

/* [Limits] DefaultMaxRuntimeSec= and MaxRuntimeSec=: a job without a limit
 * gets the default, else the maximum; more than the maximum is refused. */
Test(launch_request, runtime_limits_of_the_configuration) {
        BgrunLimits l = { .default_max_runtime_usec = UINT64_MAX, .max_runtime_usec = UINT64_MAX };
        uint64_t v = 1;
        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_request_runtime(&l, 0, &v, &message), 0);
        cr_assert_eq(v, 0, "no default and no maximum: no limit");
        cr_assert_eq(launch_request_runtime(NULL, 7, &v, &message), 0);
        cr_assert_eq(v, 7);

        l.max_runtime_usec = 3600 * 1000000ULL;
        cr_assert_eq(launch_request_runtime(&l, 0, &v, &message), 0);
        cr_assert_eq(v, l.max_runtime_usec, "no default: the maximum");
        l.default_max_runtime_usec = 2 * 1000000ULL;
        cr_assert_eq(launch_request_runtime(&l, 0, &v, &message), 0);
        cr_assert_eq(v, 2 * 1000000ULL, "the default");
        cr_assert_eq(launch_request_runtime(&l, 3600 * 1000000ULL, &v, &message), 0);
        cr_assert_eq(v, 3600 * 1000000ULL, "the maximum itself may be asked for");
        cr_assert_null(message);

        cr_assert_eq(launch_request_runtime(&l, 3600 * 1000000ULL + 1, &v, &message), BGRUN_ERROR(OVER_LIMIT));
        cr_assert_not_null(message);
        cr_assert(strstr(message, "MaxRuntimeSec=1h"), "%s", message);
}

/* MaxRuntimeUSec=infinity is no limit at all: above any MaxRuntimeSec=, so
 * refused like any value above it, and no limit where there is none. */
Test(launch_request, infinity_is_above_every_maximum) {
        BgrunLimits l = { .default_max_runtime_usec = UINT64_MAX, .max_runtime_usec = 60 * 1000000ULL };
        uint64_t v = 1;
        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_request_runtime(&l, UINT64_MAX, &v, &message), BGRUN_ERROR(OVER_LIMIT));
        cr_assert_not_null(message);
        cr_assert(strstr(message, "MaxRuntimeUSec=infinity"), "%s", message);
        cr_assert(strstr(message, "MaxRuntimeSec=1min"), "%s", message);
        free(message);
        message = NULL;

        l.max_runtime_usec = UINT64_MAX;
        cr_assert_eq(launch_request_runtime(&l, UINT64_MAX, &v, &message), 0);
        cr_assert_eq(v, 0, "infinity without a maximum: no limit");
        cr_assert_null(message);
}
