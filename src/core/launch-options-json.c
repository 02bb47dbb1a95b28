/* SPDX-License-Identifier: MIT */
/* spec.json's keys of a job's options, both ways, by the option table: each
 * row's value under its json_key, written only where it is not its default
 * (so that an older bgrund reads what it knows), read back checked. */
#include <json-c/json.h>

#include "json-util.h"
#include "launch-options.h"
#include "launch-options-private.h"
#include "macro.h"
#include "strv.h"

/* What a spec may hold: a number is its default or within its bounds (a
 * signal by its sign), so that what is written can be read back. */
static bool stored_number_ok(const LaunchOptionInfo *o, uint64_t v) {
        if (o->type == LAUNCH_VALUE_STDIN)
                return v < _JOB_STDIN_MAX;
        if (o->type == LAUNCH_VALUE_SIGNAL)
                return (int64_t) v >= (int64_t) o->min && (int64_t) v <= (int64_t) o->max;
        return v == o->default_value || (v >= o->min && v <= o->max);
}

int launch_options_to_json(const JobSpec *s, json_object *obj) {
        int r = 0;
        for (int i = 0; r >= 0 && i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                if (!o->json_key)
                        continue;
                switch (o->type) {
                case LAUNCH_VALUE_STRING:
                        r = json_add_str(obj, o->json_key, *CFIELD(s, o, char *));
                        break;
                case LAUNCH_VALUE_TOKEN:
                        /* Only when given, so that an older bgrund reads the rest. */
                        if (*CFIELD(s, o, char *))
                                r = json_add_str(obj, o->json_key, *CFIELD(s, o, char *));
                        break;
                case LAUNCH_VALUE_ARGV:
                case LAUNCH_VALUE_PATHS:
                case LAUNCH_VALUE_WORDS:
                case LAUNCH_VALUE_ENV: {
                        if (o->type != LAUNCH_VALUE_ENV && !*CFIELD(s, o, char **))
                                break;
                        json_object *a = json_object_new_array();
                        r = json_add(obj, o->json_key, a);
                        for (char **e = *CFIELD(s, o, char **); r >= 0 && e && *e; e++)
                                r = json_object_array_add(a, json_object_new_string(*e)) < 0 ? -ENOMEM : 0;
                        break;
                }
                default: {
                        uint64_t v = launch_number_of(o, s);
                        /* A spec that could not be read back is a bug. */
                        if (!stored_number_ok(o, v))
                                return -EINVAL;
                        /* Only what is not the default, so that an older
                         * bgrund reads what it knows. */
                        if (!(o->flags & LAUNCH_REQUIRED) && v == o->default_value)
                                break;
                        if (o->type == LAUNCH_VALUE_STDIN)
                                r = json_add_str(obj, o->json_key, job_stdin_to_string((JobStdin) v));
                        else if (o->type == LAUNCH_VALUE_CHOICE)
                                r = json_add_str(obj, o->json_key, o->words[v]);
                        else if (o->type == LAUNCH_VALUE_BOOL)
                                r = json_add_bool(obj, o->json_key, v);
                        else if (o->type == LAUNCH_VALUE_SIGNAL)
                                r = json_add_i64(obj, o->json_key, (int64_t) v);
                        else
                                r = json_add_u64(obj, o->json_key, v);
                }
                }
        }
        return r;
}

static int number_from_json(json_object *obj, const LaunchOptionInfo *o, uint64_t *ret) {
        int r;
        switch (o->type) {
        case LAUNCH_VALUE_STDIN: {
                _cleanup_free_ char *name = NULL;
                r = json_get_str(obj, o->json_key, &name);
                int m = r >= 0 ? job_stdin_from_string(name) : r;
                if (m < 0)
                        return -EBADMSG;
                *ret = (uint64_t) m;
                return 0; /* any a spec can name, "tty" too */
        }
        case LAUNCH_VALUE_CHOICE: {
                _cleanup_free_ char *word = NULL;
                r = json_get_str(obj, o->json_key, &word);
                int k = r >= 0 ? launch_word_value(o, word) : r;
                if (k < 0)
                        return -EBADMSG;
                *ret = (uint64_t) k;
                return 0;
        }
        case LAUNCH_VALUE_BOOL: {
                bool b;
                r = json_get_bool(obj, o->json_key, &b);
                *ret = b;
                return r;
        }
        case LAUNCH_VALUE_SIGNAL: {
                int x;
                r = json_get_i32(obj, o->json_key, &x);
                *ret = (uint64_t) (int64_t) x;
                break;
        }
        default:
                r = json_get_u64(obj, o->json_key, UINT64_MAX, ret);
        }
        if (r < 0)
                return r;
        /* Written by a bgrund that checked it: anything else is damage. */
        return stored_number_ok(o, *ret) ? 0 : -EBADMSG;
}

static int strv_from_json(json_object *obj, const char *key, char ***ret) {
        json_object *a;
        if (!json_object_object_get_ex(obj, key, &a) || !json_object_is_type(a, json_type_array))
                return -EBADMSG;
        size_t n = json_object_array_length(a);
        _cleanup_strv_free_ char **l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_string))
                        return -EBADMSG;
                if (!(l[i] = strdup(json_object_get_string(e))))
                        return -ENOMEM;
        }
        strv_free(*ret);
        *ret = TAKE_PTR(l);
        return 0;
}

int launch_options_from_json(json_object *obj, JobSpec *s) {
        launch_options_defaults(s);
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                if (!o->json_key)
                        continue;
                if (!json_object_object_get_ex(obj, o->json_key, NULL)) {
                        /* Specs from before an option was added have none:
                         * its default. */
                        if (o->flags & LAUNCH_REQUIRED)
                                return -EBADMSG;
                        continue;
                }
                int r;
                uint64_t v;
                switch (o->type) {
                case LAUNCH_VALUE_STRING:
                        r = json_get_str(obj, o->json_key, FIELD(s, o, char *));
                        break;
                case LAUNCH_VALUE_TOKEN:
                        r = json_get_str(obj, o->json_key, FIELD(s, o, char *));
                        if (r >= 0 && !launch_request_id_is_valid(*FIELD(s, o, char *)))
                                r = -EBADMSG;
                        break;
                case LAUNCH_VALUE_ENV:
                        r = strv_from_json(obj, o->json_key, FIELD(s, o, char **));
                        break;
                case LAUNCH_VALUE_ARGV: {
                        r = strv_from_json(obj, o->json_key, FIELD(s, o, char **));
                        char **l = *FIELD(s, o, char **);
                        if (r >= 0 && (!l[0] || !l[0][0] || strv_length(l) > o->max))
                                r = -EBADMSG;
                        break;
                }
                case LAUNCH_VALUE_WORDS:
                        r = strv_from_json(obj, o->json_key, FIELD(s, o, char **));
                        if (r >= 0 && launch_words_invalid(o, *FIELD(s, o, char **)) != 0)
                                r = -EBADMSG;
                        break;
                case LAUNCH_VALUE_PATHS: {
                        r = strv_from_json(obj, o->json_key, FIELD(s, o, char **));
                        char **l = *FIELD(s, o, char **);
                        for (size_t k = 0; r >= 0 && l[k]; k++)
                                if (!launch_path_valid(l[k]) || k >= o->max)
                                        r = -EBADMSG;
                        if (r >= 0 && !l[0])
                                r = -EBADMSG;
                        break;
                }
                default:
                        r = number_from_json(obj, o, &v);
                        if (r >= 0)
                                launch_set_number(o, s, v);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}
