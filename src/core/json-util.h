/* SPDX-License-Identifier: MIT */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
#define _cleanup_json_ _cleanup_(json_object_putp)

/* Adding: each takes ownership of nothing and returns 0 or -ENOMEM. */
int json_add(json_object *o, const char *key, json_object *v); /* takes v */
int json_add_str(json_object *o, const char *key, const char *v);
int json_add_u64(json_object *o, const char *key, uint64_t v);
int json_add_i64(json_object *o, const char *key, int64_t v);
int json_add_bool(json_object *o, const char *key, bool v);

/* Serialise o to a malloc'd string, unless r (the result of the adds) failed. */
int json_finish(json_object *o, int r, char **ret);

/* Parse a JSON object; -EBADMSG for anything else. */
int json_parse_object(const char *json, json_object **ret);

/* Reading: -EBADMSG when the key is missing or of another type. */
int json_get_str(json_object *o, const char *key, char **ret); /* replaces *ret */
int json_get_str_buf(json_object *o, const char *key, char *buf, size_t len);
int json_get_u64(json_object *o, const char *key, uint64_t max, uint64_t *ret);
int json_get_i32(json_object *o, const char *key, int *ret);
int json_get_bool(json_object *o, const char *key, bool *ret);
