/* SPDX-License-Identifier: MIT */
/* The option table's value types, each what it does: where its value is
 * kept, what a caller may give, how the bus and spec.json write it. A new
 * type is one row of launch_types[] and its functions here. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "domain-list.h"
#include "duration.h"
#include "json-util.h"
#include "launch-options-private.h"
#include "macro.h"
#include "strv.h"

/* ---- the rules of values --------------------------------------------------- */

static const char *const stdin_table[_JOB_STDIN_MAX] = {
        [JOB_STDIN_NULL] = "null",
        [JOB_STDIN_PIPE] = "pipe",
        [JOB_STDIN_TTY] = "tty",
};

const char *job_stdin_to_string(JobStdin s) {
        return (unsigned) s < _JOB_STDIN_MAX ? stdin_table[s] : NULL;
}

int job_stdin_from_string(const char *s) {
        for (int i = 0; s && i < _JOB_STDIN_MAX; i++)
                if (streq(s, stdin_table[i]))
                        return i;
        return -EINVAL;
}

bool launch_request_id_is_valid(const char *s) {
        size_t n = strlen(s);
        if (n < 1 || n > LAUNCH_REQUEST_ID_MAX)
                return false;
        return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@-") == n;
}

bool launch_path_valid(const char *p) {
        if (*p == '-')
                p++;
        if (*p != '/' || strlen(p) > LAUNCH_PATH_MAX_BYTES)
                return false;
        /* Each component: not "." or "..", which would make "the most
         * specific path" a question of resolution, not of the words. */
        for (const char *c = p; *c; c += strcspn(c, "/")) {
                c += strspn(c, "/");
                size_t n = strcspn(c, "/");
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
        }
        return true;
}


/* ---- where numbers are kept ---------------------------------------------- */

static uint64_t load_u64(const void *f) { return *(const uint64_t *) f; }
static void store_u64(void *f, uint64_t v) { *(uint64_t *) f = v; }
static uint64_t load_int(const void *f) { return (uint64_t) (int64_t) *(const int *) f; }
static void store_int(void *f, uint64_t v) { *(int *) f = (int) (int64_t) v; }
static uint64_t load_u16(const void *f) { return *(const uint16_t *) f; }
static void store_u16(void *f, uint64_t v) { *(uint16_t *) f = (uint16_t) v; }
static uint64_t load_u32(const void *f) { return *(const uint32_t *) f; }
static void store_u32(void *f, uint64_t v) { *(uint32_t *) f = (uint32_t) v; }
static uint64_t load_bool(const void *f) { return *(const bool *) f; }
static void store_bool(void *f, uint64_t v) { *(bool *) f = v != 0; }
static uint64_t load_unsigned(const void *f) { return *(const unsigned *) f; }
static void store_unsigned(void *f, uint64_t v) { *(unsigned *) f = (unsigned) v; }
static uint64_t load_stdin(const void *f) { return *(const JobStdin *) f; }
static void store_stdin(void *f, uint64_t v) { *(JobStdin *) f = (JobStdin) v; }
static uint64_t load_tty(const void *f) { return *(const JobStdin *) f == JOB_STDIN_TTY; }
/* Tty=false leaves what Stdin= chose. */
static void store_tty(void *f, uint64_t v) { if (v) *(JobStdin *) f = JOB_STDIN_TTY; }

/* ---- what a caller may give ---------------------------------------------- */

/* A number within the row's bounds (0 only where 0 is allowed). */
static int check_bounded(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        uint64_t n = v->u64;
        if (n == 0 && o->min > 0 && o->max == UINT64_MAX)
                return launch_invalid(ret_error, "Option %s must be greater than 0", o->name);
        if (n < o->min || n > o->max) {
                if (o->min == 0 && o->text == LAUNCH_TEXT_DURATION) {
                        char d[FORMAT_DURATION_MAX];
                        return launch_invalid(ret_error, "Option %s must be at most %" PRIu64 " µs (%s)", o->name,
                                              o->max, format_duration(d, sizeof d, o->max));
                }
                return launch_invalid(ret_error, "Option %s must be from %" PRIu64 " to %" PRIu64, o->name, o->min,
                                      o->max);
        }
        *ret = n;
        return 0;
}

/* Any signal a process can be sent, but the ones that only stop it: a stop
 * that stops nothing is not one. */
static int check_signal(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        int64_t sig = (int64_t) v->u64;
        if (sig < (int64_t) o->min || sig > (int64_t) o->max || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
            sig == SIGTTOU)
                return launch_invalid(ret_error, "Option %s must be a signal number from %" PRIu64 " to %" PRIu64
                                      " that ends a process", o->name, o->min, o->max);
        *ret = v->u64;
        return 0;
}

static int check_bool(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        *ret = v->u64 != 0;
        return 0;
}

/* A caller asks for a pipe or nothing; a terminal is Tty=. */
static int check_stdin(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        int m = job_stdin_from_string(v->str);
        if (m != JOB_STDIN_NULL && m != JOB_STDIN_PIPE)
                return strlen(v->str) <= 16
                        ? launch_invalid(ret_error, "Option %s must be 'null' or 'pipe', not '%s'", o->name, v->str)
                        : launch_invalid(ret_error, "Option %s must be 'null' or 'pipe'", o->name);
        *ret = (uint64_t) m;
        return 0;
}

/* A CHOICE's value for word, or -EINVAL; a row whose first two words are
 * "no" and "yes" takes systemd's other booleans for them too. */
static int word_value(const LaunchOptionInfo *o, const char *word) {
        for (unsigned k = 0; k <= o->max; k++)
                if (streq(word, o->words[k]))
                        return (int) k;
        static const char *const no[] = { "false", "off", "0" }, *const yes[] = { "true", "on", "1" };
        for (size_t k = 0; streq(o->words[0], "no") && streq(o->words[1], "yes") && k < ELEMENTSOF(no); k++)
                if (streq(word, no[k]) || streq(word, yes[k]))
                        return streq(word, yes[k]);
        return -EINVAL;
}

/* The row's words, joined by sep (last before the last one, when given). */
static char *join_words(const LaunchOptionInfo *o, const char *quote, const char *last) {
        char *words = NULL;
        for (size_t w = 0; o->words[w]; w++) {
                const char *sep = w == 0 ? "" : last && !o->words[w + 1] ? last : ", ";
                char *more;
                if (asprintf(&more, "%s%s%s%s%s", words ?: "", sep, quote, o->words[w], quote) < 0) {
                        free(words);
                        return NULL;
                }
                free(words);
                words = more;
        }
        return words;
}

static int check_choice(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        int k = word_value(o, v->str);
        if (k >= 0) {
                *ret = (uint64_t) k;
                return 0;
        }
        _cleanup_free_ char *words = join_words(o, "'", " or ");
        if (!words)
                return -ENOMEM;
        return strlen(v->str) <= 16 ? launch_invalid(ret_error, "Option %s must be %s, not '%s'", o->name, words, v->str)
                                    : launch_invalid(ret_error, "Option %s must be %s", o->name, words);
}

static int check_user_name(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        size_t len = strlen(v->str);
        if (len < o->min || len > o->max)
                return launch_invalid(ret_error, "Option %s must be a user name", o->name);
        return 0;
}

static int check_token(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        if (!launch_request_id_is_valid(v->str))
                return launch_invalid(ret_error, "Option %s must be %" PRIu64 " to %" PRIu64
                                      " bytes of letters, digits and ._:@-", o->name, o->min, o->max);
        return 0;
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

static int check_environment(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = v->strv; e && *e; e++, n++) {
                const char *eq = strchr(*e, '=');
                if (!eq || !env_name_valid(*e, (size_t) (eq - *e)))
                        return launch_invalid(ret_error,
                                              "%s entry %zu is not of the form NAME=VALUE with NAME of [A-Za-z0-9_]",
                                              o->name, n + 1);
                bytes += strlen(*e) + 1;
        }
        if (n > o->max || bytes > LAUNCH_ARRAY_MAX_BYTES)
                return launch_invalid(ret_error, "%s is too large (%zu entries, %zu bytes; at most %" PRIu64 " and %d)",
                                      o->name, n, bytes, o->max, LAUNCH_ARRAY_MAX_BYTES);
        return 0;
}

static int check_argv(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = v->strv; e && *e; e++, n++)
                bytes += strlen(*e) + 1;
        if (n == 0 || !v->strv[0][0])
                return launch_invalid(ret_error, "%s must begin with the program to run (a name or a path)", o->name);
        if (n > o->max || bytes > LAUNCH_ARRAY_MAX_BYTES)
                return launch_invalid(ret_error, "%s is too large (%zu words, %zu bytes; at most %" PRIu64 " and %d)",
                                      o->name, n, bytes, o->max, LAUNCH_ARRAY_MAX_BYTES);
        return 0;
}

static int check_paths(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = v->strv; e && *e; e++, n++) {
                /* Echoed only while short: the answer stays under 256 bytes. */
                if (strlen(*e + (**e == '-')) > LAUNCH_PATH_MAX_BYTES)
                        return launch_invalid(ret_error, "%s entry %zu is longer than %d bytes", o->name, n + 1,
                                              LAUNCH_PATH_MAX_BYTES);
                if (!launch_path_valid(*e))
                        return strlen(*e) <= 64
                                ? launch_invalid(ret_error, "%s entry %zu ('%s') is not an absolute path without . or .. "
                                                 "(a leading '-' makes it optional)", o->name, n + 1, *e)
                                : launch_invalid(ret_error, "%s entry %zu is not an absolute path without . or .. "
                                                 "(a leading '-' makes it optional)", o->name, n + 1);
                bytes += strlen(*e) + 1;
        }
        if (n == 0)
                return launch_invalid(ret_error, "%s needs at least one path", o->name);
        if (n > o->max || bytes > LAUNCH_ARRAY_MAX_BYTES)
                return launch_invalid(ret_error, "%s is too large (%zu paths, %zu bytes; at most %" PRIu64 " and %d)",
                                      o->name, n, bytes, o->max, LAUNCH_ARRAY_MAX_BYTES);
        return 0;
}

/* 1 to max of the row's words, a '~' before the first only. */
static int check_words(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        size_t n = 0;
        for (char *const *l = v->strv; l && l[n]; n++) {
                const char *w = l[n] + (n == 0 && l[n][0] == '~');
                size_t k = 0;
                while (o->words[k] && !streq(o->words[k], w))
                        k++;
                if (o->words[k])
                        continue;
                _cleanup_free_ char *words = join_words(o, "", NULL);
                if (!words)
                        return -ENOMEM;
                return strlen(l[n]) <= 16
                        ? launch_invalid(ret_error, "%s entry %zu ('%s') is not one of %s (a '~' before the first only)",
                                         o->name, n + 1, l[n], words)
                        : launch_invalid(ret_error, "%s entry %zu is not one of %s", o->name, n + 1, words);
        }
        if (n == 0 || n > o->max) {
                _cleanup_free_ char *words = join_words(o, "", NULL);
                if (!words)
                        return -ENOMEM;
                return launch_invalid(ret_error, "%s takes 1 to %" PRIu64 " of %s (a '~' before the first: those not)",
                                      o->name, o->max, words);
        }
        return 0;
}

/* 1 to max names, *.names and :ports (domain-list.h). */
static int check_domains(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error) {
        size_t n = 0;
        for (char *const *e = v->strv; e && *e; e++, n++)
                if (!domain_entry_valid(*e))
                        return strlen(*e) <= 64
                                ? launch_invalid(ret_error, "%s entry %zu ('%s') is not a host name, *.name (two labels at "
                                                 "least after it) or either with :PORT, in lower-case ASCII (no IP "
                                                 "address)", o->name, n + 1, *e)
                                : launch_invalid(ret_error, "%s entry %zu is not a host name of at most %d bytes", o->name,
                                                 n + 1, DOMAIN_NAME_MAX);
        if (n == 0 || n > o->max)
                return launch_invalid(ret_error, "%s takes 1 to %" PRIu64 " names", o->name, o->max);
        return 0;
}

/* ---- numbers as the bus and spec.json write them ------------------------ */

static void number_to_bus(const LaunchOptionInfo *o, uint64_t n, LaunchValue *ret) {
        ret->u64 = n;
}

static json_object *number_to_json(const LaunchOptionInfo *o, uint64_t n) {
        return json_object_new_uint64(n);
}

/* Its default or within its bounds: written by a bgrund that checked it,
 * anything else is damage. */
static int number_from_json(const LaunchOptionInfo *o, json_object *j, uint64_t *ret) {
        uint64_t n;
        if (!json_object_is_type(j, json_type_int))
                return -EBADMSG;
        errno = 0;
        n = json_object_get_uint64(j);
        if (errno != 0 || json_object_get_int64(j) < 0)
                return -EBADMSG;
        if (n != o->default_value && (n < o->min || n > o->max))
                return -EBADMSG;
        *ret = n;
        return 0;
}

static void stdin_to_bus(const LaunchOptionInfo *o, uint64_t n, LaunchValue *ret) {
        ret->str = job_stdin_to_string((JobStdin) n);
}

static void choice_to_bus(const LaunchOptionInfo *o, uint64_t n, LaunchValue *ret) {
        ret->str = n <= o->max ? o->words[n] : NULL;
}

static json_object *stdin_to_json(const LaunchOptionInfo *o, uint64_t n) {
        return json_object_new_string(job_stdin_to_string((JobStdin) n) ?: "");
}

/* Any a spec can name, "tty" too. */
static int stdin_from_json(const LaunchOptionInfo *o, json_object *j, uint64_t *ret) {
        int m = json_object_is_type(j, json_type_string) ? job_stdin_from_string(json_object_get_string(j)) : -1;
        if (m < 0)
                return -EBADMSG;
        *ret = (uint64_t) m;
        return 0;
}

static json_object *choice_to_json(const LaunchOptionInfo *o, uint64_t n) {
        return json_object_new_string(o->words[n]);
}

static int choice_from_json(const LaunchOptionInfo *o, json_object *j, uint64_t *ret) {
        int k = json_object_is_type(j, json_type_string) ? word_value(o, json_object_get_string(j)) : -1;
        if (k < 0)
                return -EBADMSG;
        *ret = (uint64_t) k;
        return 0;
}

static json_object *bool_to_json(const LaunchOptionInfo *o, uint64_t n) {
        return json_object_new_boolean(n != 0);
}

static int bool_from_json(const LaunchOptionInfo *o, json_object *j, uint64_t *ret) {
        if (!json_object_is_type(j, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(j);
        return 0;
}

static json_object *signal_to_json(const LaunchOptionInfo *o, uint64_t n) {
        return json_object_new_int64((int64_t) n);
}

/* Within the bounds by its sign. */
static int signal_from_json(const LaunchOptionInfo *o, json_object *j, uint64_t *ret) {
        if (!json_object_is_type(j, json_type_int))
                return -EBADMSG;
        int64_t sig = json_object_get_int64(j);
        if (sig < (int64_t) o->min || sig > (int64_t) o->max)
                return -EBADMSG;
        *ret = (uint64_t) sig;
        return 0;
}

#define NUMBER(load_, store_) .storage = LAUNCH_STORE_NUMBER, .load = load_, .store = store_
/* A number as it is, within its row's bounds. */
#define PLAIN .check = check_bounded, .to_bus = number_to_bus, .to_json = number_to_json, .from_json = number_from_json

const LaunchType launch_types[] = {
        [LAUNCH_VALUE_U64] = { NUMBER(load_u64, store_u64), PLAIN },
        [LAUNCH_VALUE_SIGNAL] = { NUMBER(load_int, store_int), .check = check_signal, .to_bus = number_to_bus,
                                  .to_json = signal_to_json, .from_json = signal_from_json },
        [LAUNCH_VALUE_U16] = { NUMBER(load_u16, store_u16), PLAIN },
        [LAUNCH_VALUE_U32] = { NUMBER(load_u32, store_u32), PLAIN },
        [LAUNCH_VALUE_BOOL] = { NUMBER(load_bool, store_bool), .check = check_bool, .to_bus = number_to_bus,
                                .to_json = bool_to_json, .from_json = bool_from_json },
        [LAUNCH_VALUE_STRING] = { .storage = LAUNCH_STORE_STRING, .check = check_user_name },
        [LAUNCH_VALUE_TOKEN] = { .storage = LAUNCH_STORE_STRING, .check = check_token },
        [LAUNCH_VALUE_ENV] = { .storage = LAUNCH_STORE_LIST, .check = check_environment },
        [LAUNCH_VALUE_ARGV] = { .storage = LAUNCH_STORE_LIST, .check = check_argv },
        [LAUNCH_VALUE_STDIN] = { NUMBER(load_stdin, store_stdin), .check = check_stdin, .to_bus = stdin_to_bus,
                                 .to_json = stdin_to_json, .from_json = stdin_from_json },
        /* Kept in Stdin's field, and in spec.json under its key. */
        [LAUNCH_VALUE_TTY] = { NUMBER(load_tty, store_tty), .check = check_bool, .to_bus = number_to_bus },
        [LAUNCH_VALUE_CHOICE] = { NUMBER(load_unsigned, store_unsigned), .check = check_choice, .to_bus = choice_to_bus,
                                  .to_json = choice_to_json, .from_json = choice_from_json },
        [LAUNCH_VALUE_PATHS] = { .storage = LAUNCH_STORE_LIST, .check = check_paths },
        [LAUNCH_VALUE_WORDS] = { .storage = LAUNCH_STORE_LIST, .check = check_words },
        [LAUNCH_VALUE_DOMAINS] = { .storage = LAUNCH_STORE_LIST, .check = check_domains },
};
_Static_assert(ELEMENTSOF(launch_types) == LAUNCH_VALUE_DOMAINS + 1, "a value type without its row");
