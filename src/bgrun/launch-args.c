/* SPDX-License-Identifier: MIT */
/* Launch's options from the command line onto the bus, by the shared table:
 * the names and signatures are launch_options[]'s, not spelled here. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "cmdline.h"
#include "launch-args.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "strv.h"

int parse_duration_arg(const char *value, const char *what, uint64_t *ret) {
        int r;

        r = parse_duration_usec(value, ret);
        if (r == -ERANGE)
                return log_usage_error("Duration '%s' for %s is out of range.", value, what);
        if (r < 0)
                return log_usage_error("Invalid duration '%s' for %s (try e.g. 90, 90s, 5min, 1h30min).",
                                       value, what);
        return 0;
}

/* Each parses the text of -p NAME=VALUE into ret (only on success) or logs
 * a usage error naming the option. */
typedef int (*PropertyParser)(const char *name, const char *value, LaunchValue *ret);

static int parse_memory_max(const char *name, const char *value, LaunchValue *ret) {
        if (parse_size_bytes(value, &ret->u64) < 0)
                return log_usage_error("Invalid %s '%s' (bytes, with optional K, M, G, T suffix, or 'infinity').",
                                       name, value);
        return 0;
}

static int parse_tasks_max(const char *name, const char *value, LaunchValue *ret) {
        if (streq(value, "infinity")) {
                ret->u64 = UINT64_MAX;
                return 0;
        }
        if (parse_uint64_strict(value, &ret->u64, NULL) < 0)
                return log_usage_error("Invalid %s '%s' (a number or 'infinity').", name, value);
        return 0;
}

static int parse_cpu_quota(const char *name, const char *value, LaunchValue *ret) {
        int r;

        if (strchr(value, '%'))
                r = parse_cpu_percent(value, &ret->u64);
        else
                r = parse_duration_usec(value, &ret->u64);
        if (r < 0)
                return log_usage_error("Invalid %s '%s' (e.g. 50%% or 500ms).", name, value);
        return 0;
}

static int parse_max_runtime(const char *name, const char *value, LaunchValue *ret) {
        return parse_duration_arg(value, name, &ret->u64);
}

static int parse_stop_signal(const char *name, const char *value, LaunchValue *ret) {
        int sig = parse_signal(value);

        if (sig < 0)
                return log_usage_error("Invalid %s '%s' (a name as TERM or SIGINT, or a number).", name, value);
        ret->u64 = (uint64_t) (int64_t) sig;
        return 0;
}

static int parse_user(const char *name, const char *value, LaunchValue *ret) {
        if (*value == '\0')
                return log_usage_error("%s= needs a user name.", name);
        ret->str = value;
        return 0;
}

/* The options -p sets, in the order --help and the "known:" list name them.
 * Environment is not one: -E gives it, an entry at a time. */
static const struct {
        LaunchOption option;
        PropertyParser parse;
} properties[] = {
        { LAUNCH_OPTION_MEMORY_MAX, parse_memory_max },
        { LAUNCH_OPTION_TASKS_MAX, parse_tasks_max },
        { LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC, parse_cpu_quota },
        { LAUNCH_OPTION_MAX_RUNTIME_USEC, parse_max_runtime },
        { LAUNCH_OPTION_STOP_SIGNAL, parse_stop_signal },
        { LAUNCH_OPTION_STOP_GRACE_USEC, parse_max_runtime },
        { LAUNCH_OPTION_USER, parse_user },
};

void launch_args_done(LaunchArgs *a) {
        free(a->environment);
        *a = (LaunchArgs) {};
}

void launch_args_set(LaunchArgs *a, LaunchOption i, LaunchValue v) {
        v.signature = launch_options[i].signature;
        a->values[i] = v;
        a->set |= 1U << i;
}

static int log_unknown_property(const char *name) {
        _cleanup_free_ char *known = NULL;
        size_t len = 1;
        char *p;

        for (size_t k = 0; k < ELEMENTSOF(properties); k++)
                len += strlen(launch_options[properties[k].option].name) + 2;
        p = known = malloc(len);
        if (!known)
                return log_oom();
        *p = '\0';
        for (size_t k = 0; k < ELEMENTSOF(properties); k++) {
                if (k > 0)
                        p = stpcpy(p, ", ");
                p = stpcpy(p, launch_options[properties[k].option].name);
        }

        return log_usage_error("Unknown property '%s' (known: %s).", name, known);
}

int launch_args_parse_property(LaunchArgs *a, const char *assignment) {
        _cleanup_free_ char *name = NULL;
        const char *eq;
        int r;

        eq = strchr(assignment, '=');
        if (!eq || eq == assignment)
                return log_usage_error("Invalid property assignment '%s', expected PROP=VALUE.", assignment);

        name = strndup(assignment, (size_t) (eq - assignment));
        if (!name)
                return log_oom();

        for (size_t k = 0; k < ELEMENTSOF(properties); k++) {
                LaunchOption i = properties[k].option;
                LaunchValue v = {};

                if (!streq(name, launch_options[i].name))
                        continue;

                r = properties[k].parse(launch_options[i].name, eq + 1, &v);
                if (r < 0)
                        return r;
                launch_args_set(a, i, v);
                return 0;
        }

        return log_unknown_property(name);
}

int launch_args_add_environment(LaunchArgs *a, char *assignment) {
        const char *eq = strchr(assignment, '=');

        if (!eq || eq == assignment)
                return log_usage_error("Invalid environment assignment '%s', expected NAME=VALUE.", assignment);

        if (strv_push(&a->environment, &a->n_environment, assignment) < 0)
                return log_oom();

        launch_args_set(a, LAUNCH_OPTION_ENVIRONMENT, (LaunchValue) { .strv = a->environment });
        return 0;
}

static int append_option(sd_bus_message *m, LaunchOption i, const LaunchValue *v) {
        const LaunchOptionInfo *o = &launch_options[i];
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', o->name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', o->signature);
        if (r >= 0) {
                if (streq(o->signature, "t"))
                        r = sd_bus_message_append_basic(m, 't', &v->u64);
                else if (streq(o->signature, "i")) {
                        int32_t i32 = (int32_t) (int64_t) v->u64;
                        r = sd_bus_message_append_basic(m, 'i', &i32);
                } else if (streq(o->signature, "b")) {
                        int b = v->u64 != 0;
                        r = sd_bus_message_append_basic(m, 'b', &b);
                } else if (streq(o->signature, "q")) {
                        uint16_t q = (uint16_t) v->u64;
                        r = sd_bus_message_append_basic(m, 'q', &q);
                } else if (streq(o->signature, "s"))
                        r = sd_bus_message_append_basic(m, 's', v->str);
                else if (streq(o->signature, "as"))
                        r = sd_bus_message_append_strv(m, (char **) v->strv);
                else
                        r = -EOPNOTSUPP; /* a type new to the table: teach this function */
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int launch_args_append(const LaunchArgs *a, sd_bus_message *m) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");

        /* The numbers first, then the others, each in the table's order: the
         * order bgrun has always sent them in, so that of two bad values
         * bgrund still names the same one. */
        for (int numbers = 1; r >= 0 && numbers >= 0; numbers--)
                for (LaunchOption i = 0; r >= 0 && i < _LAUNCH_OPTION_MAX; i++)
                        if (launch_args_is_set(a, i) && streq(launch_options[i].signature, "t") == numbers)
                                r = append_option(m, i, &a->values[i]);

        /* Not in the shared table of this bgrund's version: by name. */
        if (r >= 0 && a->stdin_pipe)
                r = sd_bus_message_append(m, "{sv}", "Stdin", "s", "pipe");
        if (r >= 0 && a->tty)
                r = sd_bus_message_append(m, "{sv}", "Tty", "b", 1);
        if (r >= 0 && a->tty && a->tty_rows > 0 && a->tty_columns > 0)
                r = sd_bus_message_append(m, "{sv}{sv}", "TtyRows", "q", (uint16_t) a->tty_rows,
                                          "TtyColumns", "q", (uint16_t) a->tty_columns);

        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}
