/* SPDX-License-Identifier: MIT */
/* run's secrets filter (run-env.c): what of the caller's environment the
 * job gets. */
#include <criterion/criterion.h>

#include "macro.h"
#include "run-env.h"

static void dropped(const char *entry) {
        cr_assert_not(run_env_passes(entry, NULL), "%s passed", entry);
}

static void passed(const char *entry) {
        cr_assert(run_env_passes(entry, NULL), "%s dropped", entry);
}

Test(run_env, secret_names_are_dropped_in_any_case) {
        dropped("MY_API_KEY=x");
        dropped("AWS_SECRET_ACCESS_KEY=x");
        dropped("GITHUB_TOKEN=x");
        dropped("DB_PASSWORD=x");
        dropped("MYSQL_PASSWD=x");
        dropped("GOOGLE_APPLICATION_CREDENTIALS=/k.json");
        dropped("MY_AUTH_HEADER=Bearer x");
        dropped("SESSION_COOKIE=x");
        dropped("SSH_PRIVATE=x");
        dropped("GH_PAT=x");
        dropped("SMTP_PASS=x");
        dropped("github_token=x");
        dropped("gh_pat=x");
        dropped("DbPassword=x");
        dropped("npm_config__auth=x");
        dropped("smtp_pass=x");
}

Test(run_env, a_password_in_a_url_is_dropped_a_url_without_one_passes) {
        dropped("DATABASE_URL=postgres://u:pw@db/x");
        dropped("HTTPS_PROXY=http://user:secret@proxy:3128");
        dropped("MIRRORS=https://a.example/ https://u:p@b.example/");
        dropped("REDIS=redis://:pw@cache:6379/0");
        passed("REPO=https://user@host/");
        passed("UPSTREAM=http://host:8080/");
        passed("SITE=https://example.com/path?q=a:b@c");
        passed("NOTE=not a url: user:pass@host");
}

Test(run_env, names_near_the_rules_pass) {
        passed("PATH=/usr/bin");
        passed("PATHOLOGY=1");      /* _PAT only at the end */
        passed("PASSENGER=1");      /* _PASS only at the end */
        passed("HOME=/root");
        passed("LANG=C.UTF-8");
        passed("EMPTY=");
}

Test(run_env, the_service_managers_and_bgruns_own_are_dropped) {
        dropped("NOTIFY_SOCKET=/run/n");
        dropped("LISTEN_FDS=1");
        dropped("LISTEN_PID=1");
        dropped("JOURNAL_STREAM=1:2");
        dropped("INVOCATION_ID=abc");
        dropped("BGRUN_ADDRESS=unix:path=/x");
        dropped("BASH_FUNC_f%%=() { :; }");
        dropped("NO_VALUE");
}

Test(run_env, the_allow_list_wins_over_the_rules) {
        char *allow[] = { "GH_PAT", "DATABASE_URL", "INVOCATION_ID", NULL };
        cr_assert(run_env_passes("GH_PAT=x", allow));
        cr_assert(run_env_passes("DATABASE_URL=postgres://u:pw@db/x", allow));
        cr_assert(run_env_passes("INVOCATION_ID=abc", allow));
        /* Exactly those names. */
        cr_assert_not(run_env_passes("gh_pat=x", allow));
        cr_assert_not(run_env_passes("MY_GH_PAT=x", allow));
        cr_assert_not(run_env_passes("GITHUB_TOKEN=x", allow));
}

Test(run_env, run_environment_applies_the_allow_list) {
        char *caller[] = { "PATH=/usr/bin", "GH_PAT=x", "MY_TOKEN=y", NULL };
        char *allow[] = { "MY_TOKEN", NULL };
        RunEnvOptions o = { .env_allow = allow };
        const char **env = NULL;
        size_t n;

        cr_assert_eq(run_environment(caller, &o, &env, &n), 0);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(env[0], "PATH=/usr/bin");
        cr_assert_str_eq(env[1], "MY_TOKEN=y");
        free(env);
}
