/* SPDX-License-Identifier: MIT */
/* Which of the caller's variables go to the job. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "run-env.h"

/* Names bgrund takes: [A-Za-z_][A-Za-z0-9_]* (a shell's exported functions,
 * BASH_FUNC_f%%, are not variables the job could use anyway). */
static bool name_valid(const char *name, size_t len) {
        if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = name[i];
                if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
                        return false;
        }
        return true;
}

static bool name_contains(const char *name, size_t len, const char *word) {
        size_t wlen = strlen(word);

        for (size_t i = 0; i + wlen <= len; i++)
                if (strncasecmp(name + i, word, wlen) == 0)
                        return true;
        return false;
}

static bool name_is(const char *name, size_t len, const char *what) {
        return strlen(what) == len && strncmp(name, what, len) == 0;
}

static bool name_starts(const char *name, size_t len, const char *prefix) {
        size_t plen = strlen(prefix);
        return len >= plen && strncmp(name, prefix, plen) == 0;
}

bool run_env_passes(const char *name, size_t len) {
        static const char *const secrets[] = { "KEY", "SECRET", "TOKEN", "PASSWORD" };

        if (!name_valid(name, len))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(secrets); i++)
                if (name_contains(name, len, secrets[i]))
                        return false;
        /* The caller's own service manager's, and bgrun's. */
        return !name_is(name, len, "NOTIFY_SOCKET") && !name_starts(name, len, "LISTEN_") &&
                !name_is(name, len, "JOURNAL_STREAM") && !name_is(name, len, "INVOCATION_ID") &&
                !name_starts(name, len, "BGRUN_");
}

/* What the target user's account says, with User=. */
static bool name_of_the_account(const char *name, size_t len) {
        return name_is(name, len, "HOME") || name_is(name, len, "USER") || name_is(name, len, "LOGNAME") ||
                name_is(name, len, "SHELL");
}

/* Puts e into env (n entries), replacing an entry of the same name. */
static void env_put(const char **env, size_t *n, const char *e) {
        size_t len = strcspn(e, "=");

        for (size_t i = 0; i < *n; i++)
                if (strncmp(env[i], e, len) == 0 && env[i][len] == '=') {
                        env[i] = e;
                        return;
                }
        env[(*n)++] = e;
}

int run_environment(char *const *caller, const RunEnvOptions *o, const char ***ret, size_t *ret_n) {
        const char **env;
        size_t max = 2, n = 0;

        for (char *const *e = caller; e && *e; e++)
                max++;
        for (char *const *e = o->setenv; e && *e; e++)
                max++;

        env = calloc(max, sizeof(char *));
        if (!env)
                return -ENOMEM;

        if (!o->clean && !o->remote)
                for (char *const *e = caller; e && *e; e++) {
                        size_t len = strcspn(*e, "=");

                        if ((*e)[len] != '=' || !run_env_passes(*e, len))
                                continue;
                        if (o->other_user && name_of_the_account(*e, len))
                                continue;
                        env_put(env, &n, *e);
                }

        if (o->tty) {
                const char *term = NULL;

                for (char *const *e = caller; e && *e; e++)
                        if (strncmp(*e, "TERM=", 5) == 0 && (*e)[5])
                                term = *e;
                env_put(env, &n, term ?: "TERM=vt220");
        }

        for (char *const *e = o->setenv; e && *e; e++)
                env_put(env, &n, *e);

        env[n] = NULL;
        *ret = env;
        *ret_n = n;
        return 0;
}
