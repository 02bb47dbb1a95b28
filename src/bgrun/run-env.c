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

static bool name_ends(const char *name, size_t len, const char *suffix) {
        size_t slen = strlen(suffix);
        return len >= slen && strncasecmp(name + len - slen, suffix, slen) == 0;
}

/* Whether value carries a password in a URL: "scheme://user:pass@host",
 * anywhere in it (a list of URLs too). "https://user@host/" and
 * "http://host:8080/" carry none. */
static bool value_has_url_password(const char *value) {
        for (const char *p = strstr(value, "://"); p; p = strstr(p + 1, "://")) {
                const char *authority = p + 3;
                size_t alen = strcspn(authority, "/?#");
                const char *at = memrchr(authority, '@', alen);
                if (at && memchr(authority, ':', (size_t) (at - authority)))
                        return true;
        }
        return false;
}

static bool name_allowed(const char *name, size_t len, char *const *allow) {
        for (char *const *a = allow; a && *a; a++)
                if (name_is(name, len, *a))
                        return true;
        return false;
}

/* What run does not pass of the caller's environment (README and
 * `bgrun help run` quote this):
 *   - variables whose names contain KEY, SECRET, TOKEN, PASSWORD, PASSWD,
 *     CREDENTIAL, AUTH, COOKIE or PRIVATE, or end in _PAT or _PASS, in any
 *     case (GH_PAT, my_api_key, MY_AUTH_HEADER);
 *   - variables whose value carries a password in a URL,
 *     scheme://user:password@... (DATABASE_URL=postgres://u:pw@db/x);
 *     a URL with a user and no password passes;
 *   - the caller's own service manager's and bgrun's: NOTIFY_SOCKET,
 *     LISTEN_*, JOURNAL_STREAM, INVOCATION_ID, BGRUN_*;
 *   - names that are no variable's ([A-Za-z_][A-Za-z0-9_]* only).
 * --env-allow NAME passes NAME whatever these rules say (not an invalid
 * name); -E NAME=VALUE sets a variable for the job outright. */
bool run_env_passes(const char *entry, char *const *allow) {
        static const char *const secrets[] = { "KEY",        "SECRET", "TOKEN",  "PASSWORD", "PASSWD",
                                               "CREDENTIAL", "AUTH",   "COOKIE", "PRIVATE" };
        size_t len = strcspn(entry, "=");

        if (entry[len] != '=' || !name_valid(entry, len))
                return false;
        if (name_allowed(entry, len, allow))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(secrets); i++)
                if (name_contains(entry, len, secrets[i]))
                        return false;
        if (name_ends(entry, len, "_PAT") || name_ends(entry, len, "_PASS"))
                return false;
        if (value_has_url_password(entry + len + 1))
                return false;
        return !name_is(entry, len, "NOTIFY_SOCKET") && !name_starts(entry, len, "LISTEN_") &&
                !name_is(entry, len, "JOURNAL_STREAM") && !name_is(entry, len, "INVOCATION_ID") &&
                !name_starts(entry, len, "BGRUN_");
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

                        if (!run_env_passes(*e, o->env_allow))
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
