/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "environment.h"
#include "macro.h"
#include "sandbox-plan.h"
#include "sandbox-profile.h"
#include "strv.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define N_BASE 6

static const char *const proxy_url_names[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy" };
static const char *const proxy_fixed[] = { "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
                                           "NODE_USE_ENV_PROXY=1" };
#define N_PROXY (ELEMENTSOF(proxy_url_names) + ELEMENTSOF(proxy_fixed))

/* entry (malloc'd, taken) in env's first i entries in place of one of its
 * name, else appended. */
static void set_last(char **env, size_t *i, char *entry) {
        size_t klen = strcspn(entry, "=") + 1, j;
        for (j = 0; j < *i && strncmp(env[j], entry, klen) != 0; j++)
                ;
        if (j < *i)
                free(env[j]);
        else
                (*i)++;
        env[j] = entry;
}

static int set_proxy(char **env, size_t *i) {
        for (size_t k = 0; k < ELEMENTSOF(proxy_url_names); k++) {
                char *v = NULL;
                if (asprintf(&v, "%s=" PROXY_URL_PLACEHOLDER, proxy_url_names[k]) < 0)
                        return -ENOMEM;
                set_last(env, i, v);
        }
        for (size_t k = 0; k < ELEMENTSOF(proxy_fixed); k++) {
                char *v = strdup(proxy_fixed[k]);
                if (!v)
                        return -ENOMEM;
                set_last(env, i, v);
        }
        return 0;
}

void job_environment_set_proxy_port(char **env, uint16_t port) {
        static const size_t digits = sizeof "00000" - 1;
        for (char **e = env; *e; e++)
                for (size_t k = 0; k < ELEMENTSOF(proxy_url_names); k++) {
                        size_t n = strlen(proxy_url_names[k]);
                        if (strncmp(*e, proxy_url_names[k], n) != 0 || strcmp(*e + n, "=" PROXY_URL_PLACEHOLDER) != 0)
                                continue;
                        char *p = *e + strlen(*e) - digits;
                        char text[sizeof "65535"];
                        size_t len = 0;
                        for (unsigned v = port; len == 0 || v > 0; v /= 10)
                                text[len++] = (char) ('0' + v % 10);
                        for (size_t d = 0; d < len; d++)
                                p[d] = text[len - 1 - d];
                        p[len] = '\0';
                }
}

int job_environment(const JobSpec *spec, char ***ret) {
        size_t n = 0;
        for (char **e = spec->environment; e && *e; e++)
                n++;
        _cleanup_strv_free_ char **env = calloc(N_BASE + n + 2 + N_PROXY, sizeof(char *));
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
                char *v = NULL;
                if (asprintf(&v, "BGRUN_SANDBOX=%s", sandbox_profile_name(spec)) < 0)
                        return -ENOMEM;
                set_last(env, &i, v);
        }
        /* The proxy is the one way out: its variables over the caller's. */
        if (spec->allowed_domains && set_proxy(env, &i) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(env);
        return 0;
}
