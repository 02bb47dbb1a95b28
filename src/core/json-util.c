/* SPDX-License-Identifier: MIT */
/* Small helpers over json-c for the on-disk records: adding keys, and
 * reading keys with their types checked (a wrong type is -EBADMSG, never a
 * silent default). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"

int json_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_str(json_object *o, const char *key, const char *v) {
        return json_add(o, key, json_object_new_string(v ?: ""));
}

int json_add_u64(json_object *o, const char *key, uint64_t v) {
        return json_add(o, key, json_object_new_uint64(v));
}

int json_add_i64(json_object *o, const char *key, int64_t v) {
        return json_add(o, key, json_object_new_int64(v));
}

int json_add_bool(json_object *o, const char *key, bool v) {
        return json_add(o, key, json_object_new_boolean(v));
}

int json_finish(json_object *o, int r, char **ret) {
        if (r < 0)
                return r;
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}


int json_parse_object(const char *json, json_object **ret) {
        json_object *o = json_tokener_parse(json);
        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

int json_get_str(json_object *o, const char *key, char **ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return -EBADMSG;
        char *s = strdup(json_object_get_string(v));
        if (!s)
                return -ENOMEM;
        free(*ret);
        *ret = s;
        return 0;
}

int json_get_str_buf(json_object *o, const char *key, char *buf, size_t len) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return -EBADMSG;
        const char *s = json_object_get_string(v);
        if (strlen(s) >= len)
                return -EBADMSG;
        strcpy(buf, s);
        return 0;
}

int json_get_u64(json_object *o, const char *key, uint64_t max, uint64_t *ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        errno = 0;
        uint64_t u = json_object_get_uint64(v);
        if (errno != 0 || u > max || json_object_get_int64(v) < 0)
                return -EBADMSG;
        *ret = u;
        return 0;
}

int json_get_i32(json_object *o, const char *key, int *ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        int64_t i = json_object_get_int64(v);
        if (i < INT32_MIN || i > INT32_MAX)
                return -EBADMSG;
        *ret = (int) i;
        return 0;
}

int json_get_bool(json_object *o, const char *key, bool *ret) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(v);
        return 0;
}
