/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>

#include "environment.h"
#include "macro.h"
#include "strv.h"

static JobSpec spec_with(char **environment) {
        JobSpec s = {
                .id = "abc0123456",
                .environment = environment,
        };
        /* JobSpec's strings are not const; these buffers outlive each test. */
        static char user[] = "alice", home[] = "/home/alice", shell[] = "/bin/zsh";
        s.user = user;
        s.home = home;
        s.shell = shell;
        return s;
}

Test(supervisor_environment, defaults_in_order_and_null_terminated) {
        JobSpec s = spec_with(NULL);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        cr_assert_eq(strv_length(env), 6);
        cr_assert_str_eq(env[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        cr_assert_str_eq(env[1], "HOME=/home/alice");
        cr_assert_str_eq(env[2], "USER=alice");
        cr_assert_str_eq(env[3], "LOGNAME=alice");
        cr_assert_str_eq(env[4], "SHELL=/bin/zsh");
        cr_assert_str_eq(env[5], "BGRUN_JOB_ID=abc0123456");
        cr_assert_null(env[6]);
}

Test(supervisor_environment, empty_caller_list_is_like_none) {
        char *none[] = { NULL };
        JobSpec s = spec_with(none);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        cr_assert_eq(strv_length(env), 6);
}

Test(supervisor_environment, caller_entries_override_in_place) {
        char path[] = "PATH=/opt/bin", job[] = "BGRUN_JOB_ID=spoofed";
        char *caller[] = { job, path, NULL };
        JobSpec s = spec_with(caller);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        /* Replaced where the default was, not appended: no name twice. */
        cr_assert_eq(strv_length(env), 6);
        cr_assert_str_eq(env[0], "PATH=/opt/bin");
        cr_assert_str_eq(env[1], "HOME=/home/alice");
        cr_assert_str_eq(env[5], "BGRUN_JOB_ID=spoofed");
        cr_assert_null(env[6]);
}

Test(supervisor_environment, new_names_follow_in_the_callers_order) {
        char b[] = "B=2", a[] = "A=1", empty[] = "EMPTY=";
        char *caller[] = { b, a, empty, NULL };
        JobSpec s = spec_with(caller);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        cr_assert_eq(strv_length(env), 9);
        cr_assert_str_eq(env[5], "BGRUN_JOB_ID=abc0123456");
        cr_assert_str_eq(env[6], "B=2");
        cr_assert_str_eq(env[7], "A=1");
        cr_assert_str_eq(env[8], "EMPTY=");
        cr_assert_null(env[9]);
}

Test(supervisor_environment, names_match_whole_not_by_prefix) {
        /* USERNAME is not USER, and HOM is not HOME. */
        char username[] = "USERNAME=bob", hom[] = "HOM=x";
        char *caller[] = { username, hom, NULL };
        JobSpec s = spec_with(caller);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        cr_assert_eq(strv_length(env), 8);
        cr_assert_str_eq(env[1], "HOME=/home/alice");
        cr_assert_str_eq(env[2], "USER=alice");
        cr_assert_str_eq(env[6], "USERNAME=bob");
        cr_assert_str_eq(env[7], "HOM=x");
}

Test(supervisor_environment, a_name_repeated_by_the_caller_keeps_the_last) {
        char x1[] = "X=1", y[] = "Y=y", x2[] = "X=2";
        char *caller[] = { x1, y, x2, NULL };
        JobSpec s = spec_with(caller);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        cr_assert_eq(strv_length(env), 8);
        cr_assert_str_eq(env[6], "X=2");
        cr_assert_str_eq(env[7], "Y=y");
}

Test(supervisor_environment, the_callers_list_is_copied) {
        char foo[] = "FOO=bar";
        char *caller[] = { foo, NULL };
        JobSpec s = spec_with(caller);
        _cleanup_strv_free_ char **env = NULL;
        cr_assert_eq(job_environment(&s, &env), 0);
        cr_assert_neq(env[6], foo);
        foo[0] = 'G';
        cr_assert_str_eq(env[6], "FOO=bar");
}
