/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>

#include "error-text.h"

/* What the option table's files share of a row's value: not for other
 * files, which go through launch-options.h. */

#include <json-c/json.h>

#include "launch-options.h"
#include "macro.h"

/* The field of row o in s. */
#define FIELD(s, o, type) ((type *) ((char *) (s) + (o)->offset))
#define CFIELD(s, o, type) ((type const *) ((const char *) (s) + (o)->offset))

/* How a type keeps its value in the JobSpec. */
typedef enum LaunchStorage {
        LAUNCH_STORE_NUMBER, /* a number of the type's C type: load() and store() */
        LAUNCH_STORE_STRING, /* a char *, NULL while not given */
        LAUNCH_STORE_LIST,   /* a NULL-terminated char **, NULL while not given */
} LaunchStorage;

/* What a value type does, all of it: each LaunchValueType is one row of
 * launch_types[] (launch-types.c), and the table's code calls these, never
 * a switch of its own. A STRING's or LIST's value is kept, written to the
 * bus and to spec.json as it is (a string, an array of strings): only its
 * check is its type's. */
typedef struct LaunchType {
        LaunchStorage storage;
        /* NUMBER: the field's value, whatever its C type, and back. */
        uint64_t (*load)(const void *field);
        void (*store)(void *field, uint64_t v);
        /* A caller's value (as on the bus), checked against row o: 0, or
         * -EINVAL with a message for the caller. A NUMBER's number in *ret.
         * What spec.json holds of a STRING or LIST passes it too. */
        int (*check)(const LaunchOptionInfo *o, const LaunchValue *v, uint64_t *ret, char **ret_error);
        /* NUMBER: number n as the bus has it. */
        void (*to_bus)(const LaunchOptionInfo *o, uint64_t n, LaunchValue *ret);
        /* NUMBER: n as spec.json keeps it (NULL: not there, another row
         * keeps it), and back: -EBADMSG for what no spec holds. */
        json_object *(*to_json)(const LaunchOptionInfo *o, uint64_t n);
        int (*from_json)(const LaunchOptionInfo *o, json_object *j, uint64_t *ret);
} LaunchType;

extern const LaunchType launch_types[];

static inline const LaunchType *launch_type_of(const LaunchOptionInfo *o) {
        return &launch_types[o->type];
}

/* A NUMBER row's value in s, and the value to keep there. */
uint64_t launch_number_of(const LaunchOptionInfo *o, const JobSpec *s);
void launch_set_number(const LaunchOptionInfo *o, JobSpec *s, uint64_t v);

/* -EINVAL with a message (ret_error, malloc'd); -ENOMEM when that fails. */
#define launch_invalid(ret_error, ...) error_text(-EINVAL, (ret_error), __VA_ARGS__)
