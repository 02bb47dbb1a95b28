/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>

#include "launch-options.h"
#include "macro.h"
#include "strv.h"

#define LAUNCH_INFO(e, n, s) { n, s },
const LaunchOptionInfo launch_options[_LAUNCH_OPTION_MAX] = { BGRUN_LAUNCH_OPTIONS(LAUNCH_INFO) };
#undef LAUNCH_INFO

_printf_(2, 3)
static int invalid(char **ret_error, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int k = vasprintf(ret_error, fmt, ap);
        va_end(ap);
        if (k < 0) {
                *ret_error = NULL;
                return -ENOMEM;
        }
        return -EINVAL;
}

static bool env_name_valid(const char *e, size_t len) {
        if (len == 0 || !(e[0] == '_' || (e[0] >= 'A' && e[0] <= 'Z') || (e[0] >= 'a' && e[0] <= 'z')))
                return false;
        for (size_t i = 1; i < len; i++)
                if (!(e[i] == '_' || (e[i] >= 'A' && e[i] <= 'Z') || (e[i] >= 'a' && e[i] <= 'z') ||
                      (e[i] >= '0' && e[i] <= '9')))
                        return false;
        return true;
}

static int set_environment(LaunchOptions *o, char *const *strv, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = strv; e && *e; e++, n++) {
                const char *eq = strchr(*e, '=');
                if (!eq || !env_name_valid(*e, (size_t) (eq - *e)))
                        return invalid(ret_error,
                                       "Environment entry %zu is not of the form NAME=VALUE with NAME of [A-Za-z0-9_]",
                                       n + 1);
                bytes += strlen(*e) + 1;
        }
        if (n > LAUNCH_ENVIRONMENT_MAX_ENTRIES || bytes > LAUNCH_ENVIRONMENT_MAX_BYTES)
                return invalid(ret_error, "Environment is too large (%zu entries, %zu bytes; at most %d and %d)", n,
                               bytes, LAUNCH_ENVIRONMENT_MAX_ENTRIES, LAUNCH_ENVIRONMENT_MAX_BYTES);

        _cleanup_strv_free_ char **copy = calloc(n + 1, sizeof(char *));
        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(copy[i] = strdup(strv[i])))
                        return -ENOMEM;
        o->environment = TAKE_PTR(copy);
        return 0;
}

int launch_options_accept(const LaunchOptions *o, const char *key, const char *signature, char **ret_error) {
        int i;
        for (i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (streq(key, launch_options[i].name))
                        break;
        /* An unknown key is not echoed at any length: it may be anything. */
        if (i == _LAUNCH_OPTION_MAX)
                return strlen(key) <= 64 ? invalid(ret_error, "Unknown option '%s'", key)
                                         : invalid(ret_error, "Unknown option (a %zu-byte key)", strlen(key));
        const char *name = launch_options[i].name;
        if (o->seen & (1U << i))
                return invalid(ret_error, "Option %s given more than once", name);
        if (signature && !streq(signature, launch_options[i].signature))
                return invalid(ret_error, "Option %s must be of type '%s', not '%.16s'", name,
                               launch_options[i].signature, signature);
        return i;
}

int launch_options_set(LaunchOptions *o, const char *key, const LaunchValue *v, char **ret_error) {
        int i = launch_options_accept(o, key, v->signature, ret_error);
        if (i < 0)
                return i;
        const char *name = launch_options[i].name;
        if (streq(launch_options[i].signature, "t") && v->u64 == 0 && i != LAUNCH_OPTION_STOP_GRACE_USEC)
                return invalid(ret_error, "Option %s must be greater than 0", name);

        int r = 0;
        switch ((LaunchOption) i) {
        case LAUNCH_OPTION_MAX_RUNTIME_USEC:
                /* 0: not asked (the default applies); UINT64_MAX: infinity,
                 * no limit, which MaxRuntimeSec= refuses as any value above it. */
                o->max_runtime_usec = v->u64;
                break;
        case LAUNCH_OPTION_ENVIRONMENT:
                r = set_environment(o, v->strv, ret_error);
                break;
        case LAUNCH_OPTION_MEMORY_MAX:
                o->limits.memory_max = v->u64;
                break;
        case LAUNCH_OPTION_TASKS_MAX:
                o->limits.tasks_max = v->u64;
                break;
        case LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC:
                o->limits.cpu_quota_per_sec_usec = v->u64;
                break;
        case LAUNCH_OPTION_USER:
                if (!v->str[0] || strlen(v->str) > LAUNCH_USER_NAME_MAX)
                        return invalid(ret_error, "Option User must be a user name");
                o->user = strdup(v->str);
                if (!o->user)
                        r = -ENOMEM;
                break;
        case LAUNCH_OPTION_STOP_SIGNAL: {
                int64_t sig = (int64_t) v->u64;
                /* Any signal a process can be sent, but the ones that only
                 * stop it: a stop that stops nothing is not one. */
                if (sig < 1 || sig > SIGRTMAX || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
                        return invalid(ret_error, "Option StopSignal must be a signal number from 1 to %d that ends a process",
                                       SIGRTMAX);
                o->stop_signal = (int) sig;
                break;
        }
        case LAUNCH_OPTION_STOP_GRACE_USEC:
                if (v->u64 > LAUNCH_STOP_GRACE_USEC_MAX)
                        return invalid(ret_error, "Option StopGraceUSec must be at most %llu µs (10 min)",
                                       LAUNCH_STOP_GRACE_USEC_MAX);
                o->stop_grace_set = true;
                o->stop_grace_usec = v->u64;
                break;
        case LAUNCH_OPTION_STDIN:
                if (streq(v->str, "pipe"))
                        o->stdin_pipe = true;
                else if (!streq(v->str, "null"))
                        return strlen(v->str) <= 16
                                ? invalid(ret_error, "Option Stdin must be 'null' or 'pipe', not '%s'", v->str)
                                : invalid(ret_error, "Option Stdin must be 'null' or 'pipe'");
                break;
        case LAUNCH_OPTION_TTY:
                o->tty = v->u64 != 0;
                break;
        case LAUNCH_OPTION_BIND_TO_CALLER:
                o->bind_to_caller = v->u64 != 0;
                break;
        case LAUNCH_OPTION_ENFORCE_LIMITS:
                o->enforce_limits = v->u64 != 0;
                break;
        case LAUNCH_OPTION_TTY_ROWS:
        case LAUNCH_OPTION_TTY_COLUMNS:
                if (v->u64 < 1 || v->u64 > LAUNCH_TTY_SIZE_MAX)
                        return invalid(ret_error, "Option %s must be from 1 to %d", name, LAUNCH_TTY_SIZE_MAX);
                *(i == LAUNCH_OPTION_TTY_ROWS ? &o->tty_rows : &o->tty_columns) = (uint16_t) v->u64;
                break;
        case _LAUNCH_OPTION_MAX:
                break;
        }
        if (r >= 0)
                o->seen |= 1U << i;
        return r;
}

int launch_options_array_max(int i, size_t *ret_entries, size_t *ret_bytes) {
        if (i != LAUNCH_OPTION_ENVIRONMENT)
                return -EINVAL;
        *ret_entries = LAUNCH_ENVIRONMENT_MAX_ENTRIES;
        *ret_bytes = LAUNCH_ENVIRONMENT_MAX_BYTES;
        return 0;
}

int launch_options_too_large(int i, char **ret_error) {
        size_t entries = 0, bytes = 0;
        (void) launch_options_array_max(i, &entries, &bytes);
        return invalid(ret_error, "%s is too large (more than %zu entries or %zu bytes)", launch_options[i].name,
                       entries, bytes);
}

int launch_options_check(const LaunchOptions *o, char **ret_error) {
        /* A terminal is the job's input already: a second one is a mistake. */
        if (o->tty && (o->seen & (1U << LAUNCH_OPTION_STDIN)))
                return invalid(ret_error, "Option Stdin cannot be given with Tty=true: the terminal is the job's input");
        if (!o->tty && (o->seen & (1U << LAUNCH_OPTION_TTY_ROWS | 1U << LAUNCH_OPTION_TTY_COLUMNS)))
                return invalid(ret_error, "Options TtyRows and TtyColumns need Tty=true");
        return 0;
}

void launch_options_done(LaunchOptions *o) {
        strv_free(o->environment);
        free(o->user);
        *o = (LaunchOptions) {};
}
