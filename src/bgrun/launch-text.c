/* SPDX-License-Identifier: MIT */
/* Launch's options from the command line's text, by the option table: the
 * names and how -p writes them are launch_options[]'s, not spelled here. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "cmdline.h"
#include "launch-text.h"
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
 * a usage error naming the option; by the option's LaunchText. */
typedef int (*PropertyParser)(const char *name, const char *value, LaunchValue *ret);

static int parse_bytes(const char *name, const char *value, LaunchValue *ret) {
        if (parse_size_bytes(value, &ret->u64) < 0)
                return log_usage_error("Invalid %s '%s' (bytes, with optional K, M, G, T suffix, or 'infinity').",
                                       name, value);
        return 0;
}

static int parse_count(const char *name, const char *value, LaunchValue *ret) {
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

static int parse_duration(const char *name, const char *value, LaunchValue *ret) {
        return parse_duration_arg(value, name, &ret->u64);
}

static int parse_signal_name(const char *name, const char *value, LaunchValue *ret) {
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

static int parse_yes_no(const char *name, const char *value, LaunchValue *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
                        ret->u64 = strcasecmp(value, yes[i]) == 0;
                        return 0;
                }
        return log_usage_error("Invalid %s '%s' (yes or no).", name, value);
}

/* A CHOICE's word goes as it is: bgrund names the words when it is not one. */
static int parse_word(const char *name, const char *value, LaunchValue *ret) {
        if (*value == '\0')
                return log_usage_error("%s= needs a value.", name);
        ret->str = value;
        return 0;
}

static int parse_token(const char *name, const char *value, LaunchValue *ret) {
        if (!launch_request_id_is_valid(value))
                return log_usage_error("Invalid %s '%s' (1 to %d letters, digits and ._:@-).", name, value,
                                       LAUNCH_REQUEST_ID_MAX);
        ret->str = value;
        return 0;
}

static const PropertyParser parsers[] = {
        [LAUNCH_TEXT_DURATION] = parse_duration,
        [LAUNCH_TEXT_BYTES] = parse_bytes,
        [LAUNCH_TEXT_COUNT] = parse_count,
        [LAUNCH_TEXT_CPU_QUOTA] = parse_cpu_quota,
        [LAUNCH_TEXT_SIGNAL] = parse_signal_name,
        [LAUNCH_TEXT_USER] = parse_user,
        [LAUNCH_TEXT_BOOLEAN] = parse_yes_no,
        [LAUNCH_TEXT_WORD] = parse_word,
        [LAUNCH_TEXT_TOKEN] = parse_token,
};

/* The options -p sets: those the table gives a text. Environment is not
 * one: -E gives it, an entry at a time. */
static bool is_property(LaunchOption i) {
        return launch_options[i].text != LAUNCH_TEXT_NONE;
}

static int log_unknown_property(const char *name) {
        _cleanup_free_ char *known = NULL;
        size_t len = 1;
        char *p;

        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (is_property(i))
                        len += strlen(launch_options[i].name) + 2;
        p = known = malloc(len);
        if (!known)
                return log_oom();
        *p = '\0';
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                if (!is_property(i))
                        continue;
                if (p > known)
                        p = stpcpy(p, ", ");
                p = stpcpy(p, launch_options[i].name);
        }

        return log_usage_error("Unknown property '%s' (known: %s).", name, known);
}

/* -p NAME=WORDS, as systemd-run takes them: paths or words separated by spaces, each
 * -p adding to the ones before, an empty one dropping them. */
static int add_list(LaunchArgs *a, LaunchOption i, const char *value) {
        value += strspn(value, " \t");
        if (*value == '\0') {
                launch_args_unset(a, i);
                return 0;
        }
        for (const char *w = value; *w; w += strspn(w, " \t")) {
                size_t n = strcspn(w, " \t");
                _cleanup_free_ char *word = strndup(w, n);
                if (!word || launch_args_add_word(a, i, word) < 0)
                        return log_oom();
                w += n;
        }
        return 0;
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

        const LaunchOptionInfo *o = launch_option_by_name(name);
        if (!o || !is_property((LaunchOption) (o - launch_options)))
                return log_unknown_property(name);

        if (o->text == LAUNCH_TEXT_LIST)
                return add_list(a, (LaunchOption) (o - launch_options), eq + 1);
        LaunchValue v = {};
        r = parsers[o->text](o->name, eq + 1, &v);
        if (r < 0)
                return r;
        launch_args_set(a, (LaunchOption) (o - launch_options), v);
        return 0;
}

int launch_args_parse_value(LaunchArgs *a, LaunchOption i, const char *what, const char *text) {
        const LaunchOptionInfo *o = &launch_options[i];
        if (o->text == LAUNCH_TEXT_LIST) {
                if (!text[0])
                        return log_usage_error("%s needs a value.", what);
                return launch_args_add_word(a, i, text) < 0 ? log_oom() : 0;
        }
        LaunchValue v = {};
        int r = parsers[o->text](what, text, &v);
        if (r < 0)
                return r;
        launch_args_set(a, i, v);
        return 0;
}

int launch_args_add_environment(LaunchArgs *a, const char *assignment) {
        const char *eq = strchr(assignment, '=');

        if (!eq || eq == assignment)
                return log_usage_error("Invalid environment assignment '%s', expected NAME=VALUE.", assignment);
        return launch_args_add_word(a, LAUNCH_OPTION_ENVIRONMENT, assignment) < 0 ? log_oom() : 0;
}
