/* SPDX-License-Identifier: MIT */
#pragma once

/* Dictionaries (a{sv}) read into structs through a table of known keys.
 * Unknown keys and keys of an unexpected type are skipped, missing keys are
 * fine: each struct starts with a bit mask of the keys that were present, bit
 * i for the table's entry i. The same table, in the contract's order, writes
 * the JSON form. */

#include <json-c/json.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

typedef enum FieldType {
        FIELD_STRING, /* char *, owned */
        FIELD_BOOL,   /* int */
        FIELD_INT32,  /* int32_t */
        FIELD_UINT32, /* uint32_t */
        FIELD_UINT64, /* uint64_t */
        FIELD_DICT,   /* a nested struct, described by .nested */
} FieldType;

typedef struct FieldMap FieldMap;
struct FieldMap {
        const char *key;
        FieldType type;
        size_t offset;
        const FieldMap *nested;
};

#define FIELD(type_, key_, member_, kind_) { key_, kind_, offsetof(type_, member_), NULL }
#define FIELD_NESTED(type_, key_, member_, map_) { key_, FIELD_DICT, offsetof(type_, member_), map_ }

/* Frees the strings of base (nested ones too) and clears its bit mask. */
void dict_done(const FieldMap *map, void *base);

/* Reads an a{sv} from m into base. */
int dict_read(sd_bus_message *m, const FieldMap *map, void *base);

/* Print one JSON document on stdout: obj, or base as map describes it. */
int print_json(json_object *obj);
int print_dict_json(const FieldMap *map, const void *base);
