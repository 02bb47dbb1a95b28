/* SPDX-License-Identifier: MIT */
/* The option table's rules, by row: what a caller may give, how it is kept
 * in the spec, and how spec.json holds it. What differs between options is
 * in their rows; the code differs only by a row's type. */
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "duration.h"
#include "json-util.h"
#include "launch-options.h"
#include "launch-options-private.h"
#include "macro.h"
#include "strv.h"

const char *const protect_system_words[] = { "no", "yes", "full", "strict", NULL };
const char *const protect_home_words[] = { "no", "yes", "read-only", "tmpfs", NULL };
const char *const address_family_words[] = { "AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", NULL };
static const int address_family_numbers[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET };

int launch_address_families(char *const *l, bool *ret_deny, uint32_t *ret_families) {
        bool deny = l && l[0] && l[0][0] == '~';
        uint32_t families = 0;
        for (size_t i = 0; l && l[i]; i++) {
                const char *w = l[i] + (i == 0 && deny);
                size_t k = 0;
                while (address_family_words[k] && !streq(address_family_words[k], w))
                        k++;
                if (!address_family_words[k])
                        return -EINVAL;
                families |= UINT32_C(1) << address_family_numbers[k];
        }
        *ret_deny = deny;
        *ret_families = families;
        return 0;
}

#define LAUNCH_INFO(e, n, sig, json, field, type_, def, min_, max_, flags_, text_, words_)                      \
        [LAUNCH_OPTION_##e] = { .name = n, .signature = sig, .json_key = json,                                  \
                                .offset = offsetof(JobSpec, field), .type = LAUNCH_VALUE_##type_,               \
                                .default_value = def, .min = min_, .max = max_, .flags = flags_,                \
                                .text = LAUNCH_TEXT_##text_, .words = words_ },
const LaunchOptionInfo launch_options[_LAUNCH_OPTION_MAX] = { LAUNCH_OPTION_TABLE(LAUNCH_INFO) };
#undef LAUNCH_INFO

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

const LaunchOptionInfo *launch_option_by_name(const char *name) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (streq(name, launch_options[i].name))
                        return &launch_options[i];
        return NULL;
}


/* A number's value in s, whatever its C type. */
uint64_t launch_number_of(const LaunchOptionInfo *o, const JobSpec *s) {
        switch (o->type) {
        case LAUNCH_VALUE_U64: return *CFIELD(s, o, uint64_t);
        case LAUNCH_VALUE_SIGNAL: return (uint64_t) (int64_t) *CFIELD(s, o, int);
        case LAUNCH_VALUE_U16: return *CFIELD(s, o, uint16_t);
        case LAUNCH_VALUE_U32: return *CFIELD(s, o, uint32_t);
        case LAUNCH_VALUE_BOOL: return *CFIELD(s, o, bool);
        case LAUNCH_VALUE_STDIN: return *CFIELD(s, o, JobStdin);
        case LAUNCH_VALUE_TTY: return *CFIELD(s, o, JobStdin) == JOB_STDIN_TTY;
        case LAUNCH_VALUE_CHOICE: return *CFIELD(s, o, unsigned);
        default: return 0;
        }
}

void launch_set_number(const LaunchOptionInfo *o, JobSpec *s, uint64_t v) {
        switch (o->type) {
        case LAUNCH_VALUE_U64: *FIELD(s, o, uint64_t) = v; break;
        case LAUNCH_VALUE_SIGNAL: *FIELD(s, o, int) = (int) (int64_t) v; break;
        case LAUNCH_VALUE_U16: *FIELD(s, o, uint16_t) = (uint16_t) v; break;
        case LAUNCH_VALUE_U32: *FIELD(s, o, uint32_t) = (uint32_t) v; break;
        case LAUNCH_VALUE_BOOL: *FIELD(s, o, bool) = v != 0; break;
        case LAUNCH_VALUE_STDIN: *FIELD(s, o, JobStdin) = (JobStdin) v; break;
        /* Tty=false leaves what Stdin= chose. */
        case LAUNCH_VALUE_TTY: if (v) *FIELD(s, o, JobStdin) = JOB_STDIN_TTY; break;
        case LAUNCH_VALUE_CHOICE: *FIELD(s, o, unsigned) = (unsigned) v; break;
        default: break;
        }
}

/* A row kept as a char * (STRING, TOKEN), as a char ** (ENV, ARGV, PATHS), or as
 * a number of some C type (the rest). */
static bool is_string(const LaunchOptionInfo *o) {
        return o->type == LAUNCH_VALUE_STRING || o->type == LAUNCH_VALUE_TOKEN;
}

static bool is_strv(const LaunchOptionInfo *o) {
        return o->type == LAUNCH_VALUE_ENV || o->type == LAUNCH_VALUE_ARGV || o->type == LAUNCH_VALUE_PATHS ||
               o->type == LAUNCH_VALUE_WORDS;
}

int launch_words_invalid(const LaunchOptionInfo *o, char *const *l) {
        size_t n = 0;
        for (; l && l[n]; n++) {
                const char *w = l[n] + (n == 0 && l[n][0] == '~');
                size_t k = 0;
                while (o->words[k] && !streq(o->words[k], w))
                        k++;
                if (!o->words[k])
                        return (int) n + 1;
        }
        return n == 0 || n > o->max ? -1 : 0;
}

static bool is_number(const LaunchOptionInfo *o) {
        return !is_string(o) && !is_strv(o);
}

void launch_options_defaults(JobSpec *s) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (is_number(&launch_options[i]))
                        launch_set_number(&launch_options[i], s, launch_options[i].default_value);
}

void launch_options_init(LaunchOptions *o) {
        *o = (LaunchOptions) {};
        launch_options_defaults(&o->spec);
}

void launch_options_free_fields(JobSpec *s) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *info = &launch_options[i];
                if (is_string(info))
                        free(TAKE_PTR(*FIELD(s, info, char *)));
                else if (is_strv(info))
                        strv_free(TAKE_PTR(*FIELD(s, info, char **)));
        }
}

void launch_options_done(LaunchOptions *o) {
        launch_options_free_fields(&o->spec);
        *o = (LaunchOptions) {};
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

const char *launch_option_word(LaunchOption i, unsigned v) {
        const LaunchOptionInfo *o = &launch_options[i];
        return o->type == LAUNCH_VALUE_CHOICE && v <= o->max ? o->words[v] : NULL;
}

/* A CHOICE's value for word, or -EINVAL; a row whose first two words are
 * "no" and "yes" takes systemd's other booleans for them too. */
int launch_word_value(const LaunchOptionInfo *o, const char *word) {
        for (unsigned k = 0; k <= o->max; k++)
                if (streq(word, o->words[k]))
                        return (int) k;
        static const char *const no[] = { "false", "off", "0" }, *const yes[] = { "true", "on", "1" };
        for (size_t k = 0; streq(o->words[0], "no") && streq(o->words[1], "yes") && k < ELEMENTSOF(no); k++)
                if (streq(word, no[k]) || streq(word, yes[k]))
                        return streq(word, yes[k]);
        return -EINVAL;
}

LaunchValue launch_option_get(LaunchOption i, const JobSpec *s) {
        const LaunchOptionInfo *o = &launch_options[i];
        LaunchValue v = { .signature = o->signature };
        if (is_string(o))
                v.str = *CFIELD(s, o, char *) ?: "";
        else if (is_strv(o))
                v.strv = *CFIELD(s, o, char **);
        else if (o->type == LAUNCH_VALUE_STDIN)
                v.str = job_stdin_to_string(*CFIELD(s, o, JobStdin));
        else if (o->type == LAUNCH_VALUE_CHOICE)
                v.str = launch_option_word(i, *CFIELD(s, o, unsigned));
        else
                v.u64 = launch_number_of(o, s);
        return v;
}

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

int launch_options_accept(const LaunchOptions *o, const char *key, const char *signature, char **ret_error) {
        const LaunchOptionInfo *info = launch_option_by_name(key);
        /* An unknown key is not echoed at any length: it may be anything. */
        if (!info)
                return strlen(key) <= 64 ? invalid(ret_error, "Unknown option '%s'", key)
                                         : invalid(ret_error, "Unknown option (a %zu-byte key)", strlen(key));
        int i = (int) (info - launch_options);
        if (o->seen & LAUNCH_OPTION_BIT(i))
                return invalid(ret_error, "Option %s given more than once", info->name);
        if (signature && !streq(signature, info->signature))
                return invalid(ret_error, "Option %s must be of type '%s', not '%.16s'", info->name, info->signature,
                               signature);
        return i;
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

static int check_environment(const LaunchOptionInfo *o, char *const *strv, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = strv; e && *e; e++, n++) {
                const char *eq = strchr(*e, '=');
                if (!eq || !env_name_valid(*e, (size_t) (eq - *e)))
                        return invalid(ret_error,
                                       "%s entry %zu is not of the form NAME=VALUE with NAME of [A-Za-z0-9_]",
                                       o->name, n + 1);
                bytes += strlen(*e) + 1;
        }
        if (n > o->max || bytes > LAUNCH_ARRAY_MAX_BYTES)
                return invalid(ret_error, "%s is too large (%zu entries, %zu bytes; at most %" PRIu64 " and %d)",
                               o->name, n, bytes, o->max, LAUNCH_ARRAY_MAX_BYTES);
        return 0;
}

static int check_argv(const LaunchOptionInfo *o, char *const *strv, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = strv; e && *e; e++, n++)
                bytes += strlen(*e) + 1;
        if (n == 0 || !strv[0][0])
                return invalid(ret_error, "%s must begin with the program to run (a name or a path)", o->name);
        if (n > o->max || bytes > LAUNCH_ARRAY_MAX_BYTES)
                return invalid(ret_error, "%s is too large (%zu words, %zu bytes; at most %" PRIu64 " and %d)", o->name,
                               n, bytes, o->max, LAUNCH_ARRAY_MAX_BYTES);
        return 0;
}

static int check_paths(const LaunchOptionInfo *o, char *const *strv, char **ret_error) {
        size_t n = 0, bytes = 0;
        for (char *const *e = strv; e && *e; e++, n++) {
                /* Echoed only while short: the answer stays under 256 bytes. */
                if (strlen(*e + (**e == '-')) > LAUNCH_PATH_MAX_BYTES)
                        return invalid(ret_error, "%s entry %zu is longer than %d bytes", o->name, n + 1,
                                       LAUNCH_PATH_MAX_BYTES);
                if (!launch_path_valid(*e))
                        return strlen(*e) <= 64
                                ? invalid(ret_error, "%s entry %zu ('%s') is not an absolute path without . or .. "
                                          "(a leading '-' makes it optional)", o->name, n + 1, *e)
                                : invalid(ret_error, "%s entry %zu is not an absolute path without . or .. "
                                          "(a leading '-' makes it optional)", o->name, n + 1);
                bytes += strlen(*e) + 1;
        }
        if (n == 0)
                return invalid(ret_error, "%s needs at least one path", o->name);
        if (n > o->max || bytes > LAUNCH_ARRAY_MAX_BYTES)
                return invalid(ret_error, "%s is too large (%zu paths, %zu bytes; at most %" PRIu64 " and %d)", o->name,
                               n, bytes, o->max, LAUNCH_ARRAY_MAX_BYTES);
        return 0;
}

static int check_words(const LaunchOptionInfo *o, char *const *strv, char **ret_error) {
        int bad = launch_words_invalid(o, strv);
        if (bad == 0)
                return 0;
        _cleanup_free_ char *words = NULL;
        for (size_t w = 0; o->words[w]; w++) {
                char *more = NULL;
                if (asprintf(&more, "%s%s%s", words ?: "", w == 0 ? "" : ", ", o->words[w]) < 0)
                        return -ENOMEM;
                free(words);
                words = more;
        }
        if (bad < 0)
                return invalid(ret_error, "%s takes 1 to %" PRIu64 " of %s (a '~' before the first: those not)",
                               o->name, o->max, words);
        const char *w = strv[bad - 1];
        return strlen(w) <= 16 ? invalid(ret_error, "%s entry %d ('%s') is not one of %s (a '~' before the first only)",
                                         o->name, bad, w, words)
                               : invalid(ret_error, "%s entry %d is not one of %s", o->name, bad, words);
}

static int copy_strv(char *const *strv, char ***ret) {
        size_t n = strv_length(strv);
        _cleanup_strv_free_ char **copy = calloc(n + 1, sizeof(char *));
        if (!copy)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++)
                if (!(copy[k] = strdup(strv[k])))
                        return -ENOMEM;
        strv_free(*ret);
        *ret = TAKE_PTR(copy);
        return 0;
}

/* Whether the number v is within row o's bounds, or a message why not. */
static int check_number(const LaunchOptionInfo *o, uint64_t v, char **ret_error) {
        switch (o->type) {
        case LAUNCH_VALUE_SIGNAL: {
                int64_t sig = (int64_t) v;
                /* Any signal a process can be sent, but the ones that only
                 * stop it: a stop that stops nothing is not one. */
                if (sig < (int64_t) o->min || sig > (int64_t) o->max || sig == SIGSTOP || sig == SIGTSTP ||
                    sig == SIGTTIN || sig == SIGTTOU)
                        return invalid(ret_error, "Option %s must be a signal number from %" PRIu64 " to %" PRIu64
                                       " that ends a process", o->name, o->min, o->max);
                return 0;
        }
        case LAUNCH_VALUE_STDIN:
        case LAUNCH_VALUE_TTY:
        case LAUNCH_VALUE_BOOL:
        case LAUNCH_VALUE_CHOICE:
                return 0;
        default:
                break;
        }
        if (v == 0 && o->min > 0 && o->max == UINT64_MAX)
                return invalid(ret_error, "Option %s must be greater than 0", o->name);
        if (v < o->min || v > o->max) {
                if (o->min == 0 && o->text == LAUNCH_TEXT_DURATION) {
                        char d[FORMAT_DURATION_MAX];
                        return invalid(ret_error, "Option %s must be at most %" PRIu64 " µs (%s)", o->name, o->max,
                                       format_duration(d, sizeof d, o->max));
                }
                return invalid(ret_error, "Option %s must be from %" PRIu64 " to %" PRIu64, o->name, o->min, o->max);
        }
        return 0;
}

int launch_options_set(LaunchOptions *o, const char *key, const LaunchValue *v, char **ret_error) {
        int i = launch_options_accept(o, key, v->signature, ret_error);
        if (i < 0)
                return i;
        const LaunchOptionInfo *info = &launch_options[i];
        int r;

        switch (info->type) {
        case LAUNCH_VALUE_STRING: {
                size_t len = strlen(v->str);
                if (len < info->min || len > info->max)
                        return invalid(ret_error, "Option %s must be a user name", info->name);
                char *copy = strdup(v->str);
                if (!copy)
                        return -ENOMEM;
                free(*FIELD(&o->spec, info, char *));
                *FIELD(&o->spec, info, char *) = copy;
                break;
        }
        case LAUNCH_VALUE_TOKEN: {
                if (!launch_request_id_is_valid(v->str))
                        return invalid(ret_error, "Option %s must be %" PRIu64 " to %" PRIu64
                                       " bytes of letters, digits and ._:@-", info->name, info->min, info->max);
                char *copy = strdup(v->str);
                if (!copy)
                        return -ENOMEM;
                free(*FIELD(&o->spec, info, char *));
                *FIELD(&o->spec, info, char *) = copy;
                break;
        }
        case LAUNCH_VALUE_ENV:
        case LAUNCH_VALUE_ARGV:
        case LAUNCH_VALUE_PATHS:
        case LAUNCH_VALUE_WORDS:
                r = info->type == LAUNCH_VALUE_ENV     ? check_environment(info, v->strv, ret_error)
                    : info->type == LAUNCH_VALUE_ARGV  ? check_argv(info, v->strv, ret_error)
                    : info->type == LAUNCH_VALUE_WORDS ? check_words(info, v->strv, ret_error)
                                                       : check_paths(info, v->strv, ret_error);
                if (r < 0)
                        return r;
                r = copy_strv(v->strv, FIELD(&o->spec, info, char **));
                if (r < 0)
                        return r;
                break;
        case LAUNCH_VALUE_STDIN: {
                /* A caller asks for a pipe or nothing; a terminal is Tty=. */
                int m = job_stdin_from_string(v->str);
                if (m != JOB_STDIN_NULL && m != JOB_STDIN_PIPE)
                        return strlen(v->str) <= 16
                                ? invalid(ret_error, "Option %s must be 'null' or 'pipe', not '%s'", info->name, v->str)
                                : invalid(ret_error, "Option %s must be 'null' or 'pipe'", info->name);
                launch_set_number(info, &o->spec, (uint64_t) m);
                break;
        }
        case LAUNCH_VALUE_CHOICE: {
                int k = launch_word_value(info, v->str);
                if (k < 0) {
                        _cleanup_free_ char *words = NULL;
                        for (unsigned w = 0; w <= info->max; w++) {
                                char *more = NULL;
                                if (asprintf(&more, "%s%s'%s'", words ?: "", w == 0 ? "" : w == info->max ? " or " : ", ",
                                             info->words[w]) < 0)
                                        return -ENOMEM;
                                free(words);
                                words = more;
                        }
                        return strlen(v->str) <= 16
                                ? invalid(ret_error, "Option %s must be %s, not '%s'", info->name, words, v->str)
                                : invalid(ret_error, "Option %s must be %s", info->name, words);
                }
                launch_set_number(info, &o->spec, (uint64_t) k);
                break;
        }
        default:
                r = check_number(info, v->u64, ret_error);
                if (r < 0)
                        return r;
                launch_set_number(info, &o->spec, v->u64);
                break;
        }
        o->seen |= LAUNCH_OPTION_BIT(i);
        return 0;
}

int launch_options_array_max(int i, size_t *ret_entries, size_t *ret_bytes) {
        if (i < 0 || i >= _LAUNCH_OPTION_MAX || !is_strv(&launch_options[i]))
                return -EINVAL;
        *ret_entries = (size_t) launch_options[i].max;
        *ret_bytes = LAUNCH_ARRAY_MAX_BYTES;
        return 0;
}

int launch_options_too_large(int i, char **ret_error) {
        size_t entries = 0, bytes = 0;
        (void) launch_options_array_max(i, &entries, &bytes);
        return invalid(ret_error, "%s is too large (more than %zu entries or %zu bytes)", launch_options[i].name,
                       entries, bytes);
}

const char *launch_sandbox_mechanism(LaunchOption i) {
        switch (i) {
        case LAUNCH_OPTION_PRIVATE_NETWORK: return "network-namespace";
        case LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES: return "seccomp";
        case LAUNCH_OPTION_PRIVATE_TMP:
        case LAUNCH_OPTION_PROTECT_SYSTEM:
        case LAUNCH_OPTION_PROTECT_HOME:
        case LAUNCH_OPTION_READ_WRITE_PATHS:
        case LAUNCH_OPTION_READ_ONLY_PATHS:
        case LAUNCH_OPTION_INACCESSIBLE_PATHS:
        case LAUNCH_OPTION_PROTECT_GIT:
                /* Mounts as systemd makes them (namespace.c): read-only
                 * mounts stop chmod, chown and xattrs too, which Landlock
                 * alone does not. */
                return "mount-namespace";
        default: return NULL;
        }
}

bool launch_option_is_set(LaunchOption i, const JobSpec *s) {
        const LaunchOptionInfo *o = &launch_options[i];
        if (is_number(o))
                return launch_number_of(o, s) != o->default_value;
        return is_string(o) ? *CFIELD(s, o, char *) != NULL : *CFIELD(s, o, char **) != NULL;
}

bool launch_options_same_sandbox(const JobSpec *a, const JobSpec *b) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                if (!(o->flags & LAUNCH_SANDBOX))
                        continue;
                bool same = is_number(o)   ? launch_number_of(o, a) == launch_number_of(o, b)
                            : is_string(o) ? streq(*CFIELD(a, o, char *) ?: "", *CFIELD(b, o, char *) ?: "")
                                           : strv_equal(*CFIELD(a, o, char **), *CFIELD(b, o, char **));
                if (!same)
                        return false;
        }
        return true;
}

int launch_options_check(const LaunchOptions *o, char **ret_error) {
        bool tty = o->spec.stdin_mode == JOB_STDIN_TTY;
        /* A terminal is the job's input already: a second one is a mistake. */
        if (tty && launch_options_given(o, LAUNCH_OPTION_STDIN))
                return invalid(ret_error, "Option Stdin cannot be given with Tty=true: the terminal is the job's input");
        if (!tty && (launch_options_given(o, LAUNCH_OPTION_TTY_ROWS) || launch_options_given(o, LAUNCH_OPTION_TTY_COLUMNS)))
                return invalid(ret_error, "Options TtyRows and TtyColumns need Tty=true");
        /* A terminal is attached when the job starts, which a queue puts off. */
        if (tty && o->spec.queue)
                return invalid(ret_error, "Option Queue cannot be given with Tty=true: a terminal job starts at once or not at all");
        return 0;
}
