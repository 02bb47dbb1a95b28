/* SPDX-License-Identifier: MIT */
#include "bgrun/bus-api.h"
#include "bus-args.h"
#include "macro.h"
#include "sandbox-plan.h"
#include "strv.h"

static int invalid_message(sd_bus_error *error, int r, const char *message) {
        if (r == -EINVAL && message)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS, "%s", message);
        return r;
}

/* An array of strings, element by element, never past its bound: at most
 * max_entries + 1 elements are read whatever the caller sent. The list is
 * sized for the bound once, so reading costs no more than its length. */
static int read_bounded_strv(sd_bus_message *m, int option, char ***ret, sd_bus_error *error) {
        size_t max_entries, max_bytes, n = 0, bytes = 0;
        int r = launch_options_array_max(option, &max_entries, &max_bytes);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(m, 'a', "s");
        if (r < 0)
                return r;
        _cleanup_strv_free_ char **l = calloc(max_entries + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        const char *s;
        while ((r = sd_bus_message_read_basic(m, 's', &s)) > 0) {
                bytes += strlen(s) + 1;
                if (n == max_entries || bytes > max_bytes) {
                        _cleanup_free_ char *message = NULL;
                        r = launch_options_too_large(option, &message);
                        return invalid_message(error, r, message);
                }
                if (!(l[n++] = strdup(s)))
                        return -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

/* The value of option i, whose type was checked: the variant is entered. */
static int read_value(sd_bus_message *m, int i, LaunchValue *v, char ***strv, sd_bus_error *error) {
        const char *signature = launch_options[i].signature;
        *v = (LaunchValue) { .signature = signature };
        switch (signature[0]) {
        case 't':
                return sd_bus_message_read_basic(m, 't', &v->u64);
        case 'i': {
                int32_t x = 0;
                int r = sd_bus_message_read_basic(m, 'i', &x);
                v->u64 = (uint64_t) (int64_t) x;
                return r;
        }
        case 'q': {
                uint16_t x = 0;
                int r = sd_bus_message_read_basic(m, 'q', &x);
                v->u64 = x;
                return r;
        }
        case 'u': {
                uint32_t x = 0;
                int r = sd_bus_message_read_basic(m, 'u', &x);
                v->u64 = x;
                return r;
        }
        case 'b': {
                int x = 0;
                int r = sd_bus_message_read_basic(m, 'b', &x);
                v->u64 = x != 0;
                return r;
        }
        case 's':
                return sd_bus_message_read_basic(m, 's', &v->str);
        case 'a': {
                int r = read_bounded_strv(m, i, strv, error);
                v->strv = *strv;
                return r;
        }
        }
        return -EINVAL;
}

/* Which a{sv} is read: how a caller's key maps to an option of
 * launch_options[] (NULL: unknown), and the words its errors use. */
typedef struct OptionSet {
        const char *(*name_of)(const char *key);
        const char *option;  /* "Option", "Stop option" */
        const char *unknown; /* "Unknown option", ... */
        const char *hint;    /* after an unknown key: what is known */
} OptionSet;

static int read_options(sd_bus_message *m, LaunchOptions *o, const OptionSet *set, sd_bus_error *error) {
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *contents = NULL;
                r = sd_bus_message_read_basic(m, 's', &key);
                if (r < 0)
                        return r;
                /* An unknown key is not echoed at any length: it may be anything. */
                const char *name = set->name_of(key);
                if (!name && strlen(key) <= 64)
                        return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS, "%s '%s'%s", set->unknown, key, set->hint);
                if (!name)
                        return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS, "%s (a %zu-byte key)%s", set->unknown,
                                                 strlen(key), set->hint);
                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                _cleanup_free_ char *message = NULL;
                int i = launch_options_accept(o, name, NULL, &message);
                if (i < 0)
                        return invalid_message(error, i, message);
                if (!streq(contents ?: "", launch_options[i].signature))
                        return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS, "%s %s must be of type '%s', not '%.16s'",
                                                 set->option, key, launch_options[i].signature, contents ?: "");

                _cleanup_strv_free_ char **strv = NULL;
                LaunchValue v;
                r = sd_bus_message_enter_container(m, 'v', contents);
                if (r >= 0)
                        r = read_value(m, i, &v, &strv, error);
                if (r >= 0)
                        r = launch_options_set(o, name, &v, &message);
                if (r < 0)
                        return invalid_message(error, r, message);
                r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r;
}

static const char *launch_name(const char *key) {
        const LaunchOptionInfo *o = launch_option_by_name(key);
        return o ? o->name : NULL;
}

int bus_read_launch_options(sd_bus_message *m, LaunchOptions *o, sd_bus_error *error) {
        static const OptionSet set = { launch_name, "Option", "Unknown option", "" };
        launch_options_init(o);
        int r = read_options(m, o, &set, error);
        if (r < 0)
                return r;
        _cleanup_free_ char *message = NULL;
        r = launch_options_check(o, &message);
        /* Paths that cannot be had together are refused here, before
         * anything of the job exists; the supervisor plans them again. */
        if (r >= 0 && sandbox_requested(&o->spec)) {
                _cleanup_(sandbox_plan_done) SandboxPlan plan = {};
                r = sandbox_plan_build(&o->spec, NULL, &plan, &message);
        }
        return invalid_message(error, r, message);
}

static const char *stop_name(const char *key) {
        return streq(key, "Signal")      ? launch_options[LAUNCH_OPTION_STOP_SIGNAL].name
               : streq(key, "GraceUSec") ? launch_options[LAUNCH_OPTION_STOP_GRACE_USEC].name
                                         : NULL;
}

int bus_read_stop_options(sd_bus_message *m, LaunchOptions *o, sd_bus_error *error) {
        static const OptionSet set = { stop_name, "Stop option", "Unknown Stop option",
                                       " (Signal and GraceUSec are known)" };
        launch_options_init(o);
        return read_options(m, o, &set, error);
}
