/* SPDX-License-Identifier: MIT */
/* What a Launch asks, without a bus (launch-request.c): the arguments'
 * bounds, each refusal with why, and the spec's defaults. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launch-request.h"
#include "macro.h"

static void expect_refused(const LaunchRequest *req, const char *why) {
        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_request_check(req, &message), -EINVAL);
        cr_assert_not_null(message);
        cr_assert(strstr(message, why), "'%s' does not say '%s'", message, why);
}

Test(launch_request, bounds_of_the_arguments) {
        expect_refused(&(LaunchRequest) { .command = "", .session = "", .cwd = "/" }, "empty");
        expect_refused(&(LaunchRequest) { .command = "true", .session = "", .cwd = "tmp" }, "cwd 'tmp' is not an absolute path");
        char session[258];
        memset(session, 's', sizeof session - 1);
        session[sizeof session - 1] = 0;
        expect_refused(&(LaunchRequest) { .command = "true", .session = session, .cwd = "/" }, "session name");

        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_request_check(&(LaunchRequest) { .command = "true", .session = "", .cwd = "/" }, &message), 0);
        cr_assert_null(message);
}

Test(launch_request, an_unknown_user_is_refused) {
        LaunchOptions o = { .user = (char *) "bgrun-no-such-user" };
        _cleanup_(job_spec_done) JobSpec spec = {};
        _cleanup_free_ char *message = NULL;
        LaunchRequest req = { .command = "true", .session = "", .cwd = "/" };
        cr_assert_eq(launch_request_spec(NULL, &req, &o, &spec, &message), -EINVAL);
        cr_assert_str_eq(message, "Option User: no such user 'bgrun-no-such-user'");
}

Test(launch_request, the_spec_has_the_callers_identity_and_the_defaults) {
        LaunchOptions o = {};
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
        cr_assert_eq(spec.stop_signal, LAUNCH_STOP_SIGNAL_DEFAULT);
        cr_assert_eq(spec.stop_grace_usec, LAUNCH_STOP_GRACE_USEC_DEFAULT);
        cr_assert_eq(spec.stdin_mode, JOB_STDIN_NULL);
        cr_assert_eq(spec.tty_rows, JOB_TTY_ROWS_DEFAULT);
        cr_assert_eq(spec.tty_columns, JOB_TTY_COLUMNS_DEFAULT);
        cr_assert_str_eq(spec.parent, "");
}
