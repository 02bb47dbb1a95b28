/* SPDX-License-Identifier: MIT */
#pragma once

/* The environment `bgrun run` hands the job: the caller's, minus what must
 * not travel (secrets by name, the caller's service manager's variables and
 * bgrun's own), then -E on top. */

#include <stdbool.h>
#include <stddef.h>

typedef struct RunEnvOptions {
        bool clean;              /* --clean-env: none of the caller's */
        bool remote;             /* -H: none of the caller's either */
        bool other_user;         /* -p User=: that user's HOME, USER, LOGNAME, SHELL win */
        bool tty;                /* --tty: TERM always */
        char *const *setenv;     /* -E NAME=VALUE..., NULL-terminated, or NULL */
        char *const *env_allow;  /* --env-allow NAME...: passed whatever the rules say, or NULL */
} RunEnvOptions;

/* Whether the caller's variable entry ("NAME=VALUE") goes to the job (the
 * rules are run-env.c's); allow: names that go whatever the rules say
 * (--env-allow), NULL-terminated, or NULL. */
bool run_env_passes(const char *entry, char *const *allow);

/* The job's environment from the caller's (environ), as a NULL-terminated
 * array of borrowed strings (free only the array); each name once, the last
 * given winning. */
int run_environment(char *const *caller, const RunEnvOptions *o, const char ***ret, size_t *ret_n);
