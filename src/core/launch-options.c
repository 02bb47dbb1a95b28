/* SPDX-License-Identifier: MIT */
/* The option table's rules, by row: what a caller may give and how it is
 * kept in the spec. What differs between options is in their rows, and
 * what differs between their types in the types' rows (launch-types.c). */
#include <sys/socket.h>

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

#define LAUNCH_INFO(e, n, sig, json, field, type_, def, min_, max_, flags_, text_, words_, mechanism_)          \
        [LAUNCH_OPTION_##e] = { .name = n, .signature = sig, .json_key = json,                                  \
                                .offset = offsetof(JobSpec, field), .type = LAUNCH_VALUE_##type_,               \
                                .default_value = def, .min = min_, .max = max_, .flags = flags_,                \
                                .text = LAUNCH_TEXT_##text_, .words = words_, .mechanism = mechanism_ },
const LaunchOptionInfo launch_options[_LAUNCH_OPTION_MAX] = { LAUNCH_OPTION_TABLE(LAUNCH_INFO) };
#undef LAUNCH_INFO

const LaunchOptionInfo *launch_option_by_name(const char *name) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (streq(name, launch_options[i].name))
                        return &launch_options[i];
        return NULL;
}

uint64_t launch_number_of(const LaunchOptionInfo *o, const JobSpec *s) {
        return launch_type_of(o)->load(CFIELD(s, o, char));
}

void launch_set_number(const LaunchOptionInfo *o, JobSpec *s, uint64_t v) {
        launch_type_of(o)->store(FIELD(s, o, char), v);
}

static LaunchStorage storage_of(const LaunchOptionInfo *o) {
        return launch_type_of(o)->storage;
}

void launch_options_defaults(JobSpec *s) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (storage_of(&launch_options[i]) == LAUNCH_STORE_NUMBER)
                        launch_set_number(&launch_options[i], s, launch_options[i].default_value);
}

void launch_options_init(LaunchOptions *o) {
        *o = (LaunchOptions) {};
        launch_options_defaults(&o->spec);
}

void launch_options_free_fields(JobSpec *s) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *info = &launch_options[i];
                if (storage_of(info) == LAUNCH_STORE_STRING)
                        free(TAKE_PTR(*FIELD(s, info, char *)));
                else if (storage_of(info) == LAUNCH_STORE_LIST)
                        strv_free(TAKE_PTR(*FIELD(s, info, char **)));
        }
}

void launch_options_done(LaunchOptions *o) {
        launch_options_free_fields(&o->spec);
        *o = (LaunchOptions) {};
}

const char *launch_option_word(LaunchOption i, unsigned v) {
        const LaunchOptionInfo *o = &launch_options[i];
        return o->type == LAUNCH_VALUE_CHOICE && v <= o->max ? o->words[v] : NULL;
}

LaunchValue launch_option_get(LaunchOption i, const JobSpec *s) {
        const LaunchOptionInfo *o = &launch_options[i];
        LaunchValue v = { .signature = o->signature };
        switch (storage_of(o)) {
        case LAUNCH_STORE_STRING: v.str = *CFIELD(s, o, char *) ?: ""; break;
        case LAUNCH_STORE_LIST: v.strv = *CFIELD(s, o, char **); break;
        case LAUNCH_STORE_NUMBER: launch_type_of(o)->to_bus(o, launch_number_of(o, s), &v); break;
        }
        return v;
}

int launch_options_accept(const LaunchOptions *o, const char *key, const char *signature, char **ret_error) {
        const LaunchOptionInfo *info = launch_option_by_name(key);
        /* An unknown key is not echoed at any length: it may be anything. */
        if (!info)
                return strlen(key) <= 64 ? launch_invalid(ret_error, "Unknown option '%s'", key)
                                         : launch_invalid(ret_error, "Unknown option (a %zu-byte key)", strlen(key));
        int i = (int) (info - launch_options);
        if (o->seen & LAUNCH_OPTION_BIT(i))
                return launch_invalid(ret_error, "Option %s given more than once", info->name);
        if (signature && !streq(signature, info->signature))
                return launch_invalid(ret_error, "Option %s must be of type '%s', not '%.16s'", info->name, info->signature,
                               signature);
        return i;
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

int launch_options_set(LaunchOptions *o, const char *key, const LaunchValue *v, char **ret_error) {
        int i = launch_options_accept(o, key, v->signature, ret_error);
        if (i < 0)
                return i;
        const LaunchOptionInfo *info = &launch_options[i];
        uint64_t n = 0;
        int r = launch_type_of(info)->check(info, v, &n, ret_error);
        if (r < 0)
                return r;

        switch (storage_of(info)) {
        case LAUNCH_STORE_STRING: {
                char *copy = strdup(v->str);
                if (!copy)
                        return -ENOMEM;
                free(*FIELD(&o->spec, info, char *));
                *FIELD(&o->spec, info, char *) = copy;
                break;
        }
        case LAUNCH_STORE_LIST:
                r = copy_strv(v->strv, FIELD(&o->spec, info, char **));
                if (r < 0)
                        return r;
                break;
        case LAUNCH_STORE_NUMBER:
                launch_set_number(info, &o->spec, n);
                break;
        }
        o->seen |= LAUNCH_OPTION_BIT(i);
        return 0;
}

int launch_options_array_max(int i, size_t *ret_entries, size_t *ret_bytes) {
        if (i < 0 || i >= _LAUNCH_OPTION_MAX || storage_of(&launch_options[i]) != LAUNCH_STORE_LIST)
                return -EINVAL;
        *ret_entries = (size_t) launch_options[i].max;
        *ret_bytes = LAUNCH_ARRAY_MAX_BYTES;
        return 0;
}

int launch_options_too_large(int i, char **ret_error) {
        size_t entries = 0, bytes = 0;
        (void) launch_options_array_max(i, &entries, &bytes);
        return launch_invalid(ret_error, "%s is too large (more than %zu entries or %zu bytes)", launch_options[i].name,
                       entries, bytes);
}

const char *launch_sandbox_mechanism(LaunchOption i) {
        return launch_options[i].mechanism;
}

bool launch_option_is_set(LaunchOption i, const JobSpec *s) {
        const LaunchOptionInfo *o = &launch_options[i];
        switch (storage_of(o)) {
        case LAUNCH_STORE_NUMBER: return launch_number_of(o, s) != o->default_value;
        case LAUNCH_STORE_STRING: return *CFIELD(s, o, char *) != NULL;
        case LAUNCH_STORE_LIST: return *CFIELD(s, o, char **) != NULL;
        }
        return false;
}

bool launch_options_same_sandbox(const JobSpec *a, const JobSpec *b) {
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                if (!(o->flags & LAUNCH_SANDBOX))
                        continue;
                LaunchStorage k = storage_of(o);
                bool same = k == LAUNCH_STORE_NUMBER   ? launch_number_of(o, a) == launch_number_of(o, b)
                            : k == LAUNCH_STORE_STRING ? streq(*CFIELD(a, o, char *) ?: "", *CFIELD(b, o, char *) ?: "")
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
                return launch_invalid(ret_error, "Option Stdin cannot be given with Tty=true: the terminal is the job's input");
        if (!tty && (launch_options_given(o, LAUNCH_OPTION_TTY_ROWS) || launch_options_given(o, LAUNCH_OPTION_TTY_COLUMNS)))
                return launch_invalid(ret_error, "Options TtyRows and TtyColumns need Tty=true");
        /* Names are reached through a proxy into a network of its own. */
        if (launch_options_given(o, LAUNCH_OPTION_ALLOWED_DOMAINS) && !o->spec.private_network)
                return launch_invalid(ret_error, "Option AllowedDomains needs PrivateNetwork=yes: its names are reached "
                                      "through a proxy, from a network of the job's own");
        /* A terminal is attached when the job starts, which a queue puts off. */
        if (tty && o->spec.queue)
                return launch_invalid(ret_error, "Option Queue cannot be given with Tty=true: a terminal job starts at once or not at all");
        return 0;
}
