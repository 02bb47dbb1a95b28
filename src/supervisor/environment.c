/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "environment.h"
#include "macro.h"
#include "sandbox-plan.h"
#include "sandbox-profile.h"
#include "strv.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define N_BASE 6

int job_environment(const JobSpec *spec, char ***ret) {
        size_t n = 0;
        for (char **e = spec->environment; e && *e; e++)
                n++;
        _cleanup_strv_free_ char **env = calloc(N_BASE + n + 2, sizeof(char *));
        if (!env)
                return -ENOMEM;

        size_t i = 0;
        if (asprintf(&env[i++], "PATH=%s", DEFAULT_PATH) < 0 ||
            asprintf(&env[i++], "HOME=%s", spec->home) < 0 ||
            asprintf(&env[i++], "USER=%s", spec->user) < 0 ||
            asprintf(&env[i++], "LOGNAME=%s", spec->user) < 0 ||
            asprintf(&env[i++], "SHELL=%s", spec->shell) < 0 ||
            asprintf(&env[i++], "BGRUN_JOB_ID=%s", spec->id) < 0) {
                env[i - 1] = NULL; /* asprintf leaves it undefined on failure */
                return -ENOMEM;
        }

        /* Override in place rather than append: with a name twice, most
         * programs take the first, which would be ours, not the caller's. */
        for (char **e = spec->environment; e && *e; e++) {
                size_t klen = strcspn(*e, "=");
                size_t j;
                for (j = 0; j < i; j++)
                        if (strncmp(env[j], *e, klen + 1) == 0)
                                break;
                char *copy = strdup(*e);
                if (!copy)
                        return -ENOMEM;
                if (j < i) {
                        free(env[j]);
                        env[j] = copy;
                } else
                        env[i++] = copy;
        }
        /* Last, over any the caller gave: a sandboxed job knows it is one
         * (bgrun says so when it cannot reach bgrund from inside). */
        if (sandbox_requested(spec)) {
                size_t j;
                for (j = 0; j < i && strncmp(env[j], "BGRUN_SANDBOX=", 14) != 0; j++)
                        ;
                char *v = NULL;
                if (asprintf(&v, "BGRUN_SANDBOX=%s", sandbox_profile_name(spec)) < 0)
                        return -ENOMEM;
                if (j < i)
                        free(env[j]);
                else
                        i++;
                env[j] = v;
        }
        *ret = TAKE_PTR(env);
        return 0;
}
