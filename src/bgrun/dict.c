/* SPDX-License-Identifier: MIT */
/* a{sv} replies read into structs through tables of known keys, and the same
 * structs written as JSON. */

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "dict.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"

static const char *field_signature(FieldType type) {
        switch (type) {
        case FIELD_STRING:
                return "s";
        case FIELD_BOOL:
                return "b";
        case FIELD_INT32:
                return "i";
        case FIELD_UINT32:
                return "u";
        case FIELD_UINT64:
                return "t";
        case FIELD_DICT:
                return "a{sv}";
        }
        return NULL;
}

void dict_done(const FieldMap *map, void *base) {
        if (!base)
                return;

        for (const FieldMap *f = map; f->key; f++) {
                void *p = (uint8_t *) base + f->offset;

                if (f->type == FIELD_STRING) {
                        char **s = p;
                        free(*s);
                        *s = NULL;
                } else if (f->type == FIELD_DICT)
                        dict_done(f->nested, p);
        }
        *(uint32_t *) base = 0;
}

static int dict_read_value(sd_bus_message *m, const FieldMap *f, void *p) {
        const char *s;
        int r;

        switch (f->type) {
        case FIELD_STRING: {
                char *copy, **dest = p;

                r = sd_bus_message_read_basic(m, 's', &s);
                if (r < 0)
                        return r;
                copy = strdup(s);
                if (!copy)
                        return -ENOMEM;
                free(*dest); /* a key given twice: the last one wins */
                *dest = copy;
                return 0;
        }
        case FIELD_BOOL:
                return sd_bus_message_read_basic(m, 'b', p);
        case FIELD_INT32:
                return sd_bus_message_read_basic(m, 'i', p);
        case FIELD_UINT32:
                return sd_bus_message_read_basic(m, 'u', p);
        case FIELD_UINT64:
                return sd_bus_message_read_basic(m, 't', p);
        case FIELD_DICT:
                return -EINVAL; /* handled by the caller */
        }
        return -EINVAL;
}

int dict_read(sd_bus_message *m, const FieldMap *map, void *base) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;

        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const FieldMap *field = NULL;
                const char *key, *contents;
                size_t index = 0;

                r = sd_bus_message_read_basic(m, 's', &key);
                if (r < 0)
                        return r;

                for (const FieldMap *f = map; f->key; f++, index++)
                        if (streq(f->key, key)) {
                                field = f;
                                break;
                        }

                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;

                if (!field || !streq(contents, field_signature(field->type))) {
                        /* Unknown to this version, or not the type we know: skip it. */
                        r = sd_bus_message_skip(m, "v");
                        if (r < 0)
                                return r;
                } else {
                        void *p = (uint8_t *) base + field->offset;

                        r = sd_bus_message_enter_container(m, 'v', contents);
                        if (r < 0)
                                return r;
                        if (field->type == FIELD_DICT)
                                r = dict_read(m, field->nested, p);
                        else
                                r = dict_read_value(m, field, p);
                        if (r < 0)
                                return r;
                        r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;

                        *(uint32_t *) base |= UINT32_C(1) << index;
                }

                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;

        return sd_bus_message_exit_container(m);
}

static json_object *dict_to_json(const FieldMap *map, const void *base) {
        _cleanup_(json_object_putp) json_object *obj = NULL;
        uint32_t present = *(const uint32_t *) base;
        size_t index = 0;

        obj = json_object_new_object();
        if (!obj)
                return NULL;

        for (const FieldMap *f = map; f->key; f++, index++) {
                const void *p = (const uint8_t *) base + f->offset;
                json_object *value = NULL;

                if (!(present & (UINT32_C(1) << index)))
                        continue;

                switch (f->type) {
                case FIELD_STRING:
                        value = json_object_new_string(*(char *const *) p);
                        break;
                case FIELD_BOOL:
                        value = json_object_new_boolean(*(const int *) p != 0);
                        break;
                case FIELD_INT32:
                        value = json_object_new_int(*(const int32_t *) p);
                        break;
                case FIELD_UINT32:
                        value = json_object_new_int64(*(const uint32_t *) p);
                        break;
                case FIELD_UINT64:
                        value = json_object_new_uint64(*(const uint64_t *) p);
                        break;
                case FIELD_DICT:
                        value = dict_to_json(f->nested, p);
                        break;
                }
                if (!value)
                        return NULL;
                if (json_object_object_add(obj, f->key, value) < 0) {
                        json_object_put(value);
                        return NULL;
                }
        }

        return TAKE_PTR(obj);
}

int print_json(json_object *obj) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
        const char *s;

        /* Pretty for people, one line per document for pipes. */
        flags |= isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN;

        s = json_object_to_json_string_ext(obj, flags);
        if (!s)
                return log_oom();
        if (puts(s) == EOF || fflush(stdout) == EOF)
                return log_error_errno(errno ? errno : EIO, "Failed to write JSON: %m");
        return 0;
}

int print_dict_json(const FieldMap *map, const void *base) {
        _cleanup_(json_object_putp) json_object *obj = NULL;

        obj = dict_to_json(map, base);
        if (!obj)
                return log_oom();
        return print_json(obj);
}
