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

/* A STRING's or LIST's value in spec.json: a string, an array of strings. */
static json_object *value_to_json(const LaunchOptionInfo *o, const JobSpec *s) {
        if (launch_type_of(o)->storage == LAUNCH_STORE_STRING)
                return json_object_new_string(*CFIELD(s, o, char *) ?: "");
        json_object *a = json_object_new_array();
        for (char **e = *CFIELD(s, o, char **); a && e && *e; e++)
                if (json_object_array_add(a, json_object_new_string(*e)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        return a;
}

int launch_options_to_json(const JobSpec *s, json_object *obj) {
        int r = 0;
        for (int i = 0; r >= 0 && i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                const LaunchType *t = launch_type_of(o);
                if (!o->json_key)
                        continue;
                /* Only what is not the default, so that an older bgrund
                 * reads what it knows. */
                if (!(o->flags & LAUNCH_REQUIRED) && !launch_option_is_set((LaunchOption) i, s))
                        continue;
                if (t->storage != LAUNCH_STORE_NUMBER) {
                        r = json_add(obj, o->json_key, value_to_json(o, s));
                        continue;
                }
                uint64_t n = launch_number_of(o, s);
                json_object *j = t->to_json(o, n);
                /* A spec that could not be read back is a bug. */
                uint64_t back;
                if (j && t->from_json(o, j, &back) < 0) {
                        json_object_put(j);
                        return -EINVAL;
                }
                r = json_add(obj, o->json_key, j);
        }
        return r;
}

static int strv_from_json(json_object *a, char ***ret) {
        if (!json_object_is_type(a, json_type_array))
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
        *ret = TAKE_PTR(l);
        return 0;
}

/* Row o's value in spec.json (j) into s: what no caller could have given
 * (its type's check) is damage. */
static int value_from_json(const LaunchOptionInfo *o, json_object *j, JobSpec *s) {
        const LaunchType *t = launch_type_of(o);
        LaunchValue v = { .signature = o->signature };
        uint64_t n;
        _cleanup_free_ char *unused = NULL;
        int r;

        switch (t->storage) {
        case LAUNCH_STORE_NUMBER:
                r = t->from_json(o, j, &n);
                if (r < 0)
                        return r;
                launch_set_number(o, s, n);
                return 0;
        case LAUNCH_STORE_STRING: {
                if (!json_object_is_type(j, json_type_string))
                        return -EBADMSG;
                v.str = json_object_get_string(j);
                if (t->check(o, &v, &n, &unused) < 0)
                        return -EBADMSG;
                char *copy = strdup(v.str);
                if (!copy)
                        return -ENOMEM;
                free(*FIELD(s, o, char *));
                *FIELD(s, o, char *) = copy;
                return 0;
        }
        case LAUNCH_STORE_LIST: {
                _cleanup_strv_free_ char **l = NULL;
                r = strv_from_json(j, &l);
                if (r < 0)
                        return r;
                v.strv = l;
                /* Environment may be empty; the others hold what was given. */
                if ((l[0] || o->type != LAUNCH_VALUE_ENV) && t->check(o, &v, &n, &unused) < 0)
                        return -EBADMSG;
                strv_free(*FIELD(s, o, char **));
                *FIELD(s, o, char **) = TAKE_PTR(l);
                return 0;
        }
        }
        return -EBADMSG;
}

int launch_options_from_json(json_object *obj, JobSpec *s) {
        launch_options_defaults(s);
        for (int i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                json_object *j;
                if (!o->json_key)
                        continue;
                if (!json_object_object_get_ex(obj, o->json_key, &j)) {
                        /* Specs from before an option was added have none:
                         * its default. */
                        if (o->flags & LAUNCH_REQUIRED)
                                return -EBADMSG;
                        continue;
                }
                int r = value_from_json(o, j, s);
                if (r < 0)
                        return r;
        }
        return 0;
}
