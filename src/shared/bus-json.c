/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bus-json.h"
#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static bool type_is_string(char t) {
        return t == SD_BUS_TYPE_STRING || t == SD_BUS_TYPE_OBJECT_PATH || t == SD_BUS_TYPE_SIGNATURE;
}

static bool type_is_container(char t) {
        return t == SD_BUS_TYPE_ARRAY || t == SD_BUS_TYPE_VARIANT || t == SD_BUS_TYPE_STRUCT ||
                t == SD_BUS_TYPE_DICT_ENTRY;
}

/* contents of an array: "{" + a string key type + ... → a JSON object. */
static bool array_is_object(const char *contents) {
        return contents[0] == SD_BUS_TYPE_DICT_ENTRY_BEGIN && type_is_string(contents[1]);
}

static int read_basic(sd_bus_message *m, char type, json_object **ret) {
        union {
                uint8_t u8;
                int b;
                int16_t s16;
                uint16_t u16;
                int32_t s32;
                uint32_t u32;
                int64_t s64;
                uint64_t u64;
                double d;
                const char *s;
        } v;
        json_object *j;
        int r;

        /* Refused before it is read: the caller may still skip it. */
        if (type == SD_BUS_TYPE_UNIX_FD)
                return -EOPNOTSUPP;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        if (r == 0)
                return -EBADMSG;

        switch (type) {
        case SD_BUS_TYPE_BYTE:
                j = json_object_new_int(v.u8);
                break;
        case SD_BUS_TYPE_BOOLEAN:
                j = json_object_new_boolean(v.b);
                break;
        case SD_BUS_TYPE_INT16:
                j = json_object_new_int(v.s16);
                break;
        case SD_BUS_TYPE_UINT16:
                j = json_object_new_int(v.u16);
                break;
        case SD_BUS_TYPE_INT32:
                j = json_object_new_int(v.s32);
                break;
        case SD_BUS_TYPE_UINT32:
                j = json_object_new_int64(v.u32);
                break;
        case SD_BUS_TYPE_INT64:
                j = json_object_new_int64(v.s64);
                break;
        case SD_BUS_TYPE_UINT64:
                j = json_object_new_uint64(v.u64);
                break;
        case SD_BUS_TYPE_DOUBLE:
                j = json_object_new_double(v.d);
                break;
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_OBJECT_PATH:
        case SD_BUS_TYPE_SIGNATURE:
                j = json_object_new_string(v.s);
                break;
        default:
                return -EBADMSG;
        }
        if (!j)
                return -ENOMEM;

        *ret = j;
        return 0;
}

static int read_value(sd_bus_message *m, unsigned depth, json_object **ret);

/* Inside an a{s…} (depth counts it): each entry becomes a key of obj. */
static int read_dict_entries(sd_bus_message *m, unsigned depth, json_object *obj) {
        int r;

        for (;;) {
                _cleanup_(json_object_putp) json_object *value = NULL;
                const char *contents, *key;
                char type;

                r = sd_bus_message_peek_type(m, &type, &contents);
                if (r <= 0)
                        return r;
                if (type != SD_BUS_TYPE_DICT_ENTRY || !type_is_string(contents[0]))
                        return -EBADMSG;
                if (depth >= BUS_JSON_DEPTH_MAX)
                        return -ELNRNG;

                r = sd_bus_message_enter_container(m, type, contents);
                if (r < 0)
                        return r;
                r = sd_bus_message_read_basic(m, contents[0], &key);
                if (r < 0)
                        return r;
                r = read_value(m, depth + 1, &value);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -EBADMSG;
                if (json_object_object_add(obj, key, value) < 0)
                        return -ENOMEM;
                TAKE_PTR(value);

                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
}

/* Inside any other container: each value becomes an element of array. */
static int read_elements(sd_bus_message *m, unsigned depth, json_object *array) {
        int r;

        for (;;) {
                _cleanup_(json_object_putp) json_object *value = NULL;

                r = read_value(m, depth, &value);
                if (r <= 0)
                        return r;
                if (json_object_array_add(array, value) < 0)
                        return -ENOMEM;
                TAKE_PTR(value);
        }
}

static int read_container(sd_bus_message *m, char type, const char *contents, unsigned depth, json_object **ret) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        int r;

        /* The check that keeps a hostile peer from taking our stack. */
        if (depth >= BUS_JSON_DEPTH_MAX)
                return -ELNRNG;

        r = sd_bus_message_enter_container(m, type, contents);
        if (r < 0)
                return r;

        if (type == SD_BUS_TYPE_VARIANT) {
                r = read_value(m, depth + 1, &j);
                if (r == 0)
                        r = -EBADMSG;
        } else if (type == SD_BUS_TYPE_ARRAY && array_is_object(contents)) {
                j = json_object_new_object();
                r = j ? read_dict_entries(m, depth + 1, j) : -ENOMEM;
        } else {
                j = json_object_new_array();
                r = j ? read_elements(m, depth + 1, j) : -ENOMEM;
        }
        if (r < 0)
                return r;

        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(j);
        return 0;
}

static int read_value(sd_bus_message *m, unsigned depth, json_object **ret) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r;

        if (type_is_container(type))
                r = read_container(m, type, contents, depth, ret);
        else
                r = read_basic(m, type, ret);
        return r < 0 ? r : 1;
}

int bus_json_read(sd_bus_message *m, json_object **ret) {
        if (!m || !ret)
                return -EINVAL;
        return read_value(m, 0, ret);
}

/* v is a JSON int in [min, max]. */
static bool int_in_range(json_object *v, int64_t min, uint64_t max) {
        int64_t s;

        if (!json_object_is_type(v, json_type_int))
                return false;

        /* json-c clamps a uint64 above INT64_MAX to INT64_MAX here, so a
         * negative answer is a real negative number... */
        s = json_object_get_int64(v);
        if (s < 0)
                return s >= min;
        /* ...and for the others json_object_get_uint64() is exact. */
        return json_object_get_uint64(v) <= max;
}

bool bus_json_is_type(json_object *v, const char *signature) {
        if (!v || !signature)
                return false;

        switch (signature[0]) {
        case SD_BUS_TYPE_BOOLEAN:
                return json_object_is_type(v, json_type_boolean);
        case SD_BUS_TYPE_BYTE:
                return int_in_range(v, 0, UINT8_MAX);
        case SD_BUS_TYPE_INT16:
                return int_in_range(v, INT16_MIN, INT16_MAX);
        case SD_BUS_TYPE_UINT16:
                return int_in_range(v, 0, UINT16_MAX);
        case SD_BUS_TYPE_INT32:
                return int_in_range(v, INT32_MIN, INT32_MAX);
        case SD_BUS_TYPE_UINT32:
                return int_in_range(v, 0, UINT32_MAX);
        case SD_BUS_TYPE_INT64:
                return int_in_range(v, INT64_MIN, INT64_MAX);
        case SD_BUS_TYPE_UINT64:
                return int_in_range(v, 0, UINT64_MAX);
        case SD_BUS_TYPE_DOUBLE:
                return json_object_is_type(v, json_type_double);
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_OBJECT_PATH:
        case SD_BUS_TYPE_SIGNATURE:
                return json_object_is_type(v, json_type_string);
        case SD_BUS_TYPE_VARIANT:
                return true;
        case SD_BUS_TYPE_ARRAY:
                if (array_is_object(signature + 1))
                        return json_object_is_type(v, json_type_object);
                return json_object_is_type(v, json_type_array);
        case SD_BUS_TYPE_STRUCT_BEGIN:
                return json_object_is_type(v, json_type_array);
        default:
                return false;
        }
}

json_object *bus_json_get(json_object *dict, const char *key, const char *signature) {
        json_object *v;

        if (!dict || !key || !json_object_is_type(dict, json_type_object))
                return NULL;
        if (!json_object_object_get_ex(dict, key, &v))
                return NULL;
        return bus_json_is_type(v, signature) ? v : NULL;
}
