/* SPDX-License-Identifier: MIT */
#pragma once

/* What bgrund answers, as bgrun holds it: a dictionary (a job's record from
 * Get and Wait, the answers of Kill and Reap) read by bus_json_read() into a
 * JSON object, keys in the order bgrund sent them, so --json prints it as it
 * came. Values are read by the key tables of record-keys.h, each with the
 * type its signature there gives: a key that is missing or of another type
 * reads as absent, as an older or newer bgrund may send either. And what a
 * record says about its job. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record-keys.h"

/* The value of key in dict if there, of the key's type; else NULL. dict may
 * be NULL (a nested dictionary that was not there). Borrowed from dict. */
json_object *dict_get(json_object *dict, const KeyInfo *key);

/* The same by the C type the caller wants: false (NULL) if absent. */
const char *dict_get_string(json_object *dict, const KeyInfo *key);
bool dict_get_bool(json_object *dict, const KeyInfo *key, bool *ret);
bool dict_get_int(json_object *dict, const KeyInfo *key, int64_t *ret);   /* "i", "x" */
bool dict_get_uint(json_object *dict, const KeyInfo *key, uint64_t *ret); /* "u", "t" */

/* Whether the record is not final yet: the job is queued or runs, or its kill was
 * answered and its end's own fields are still to come. */
bool record_is_running(json_object *rec);
bool record_timed_out(json_object *rec);
/* The signal that ended the job, or 0. */
int record_signal(json_object *rec);
/* The exit status of bgrun for an ended job, as timeout(1) and shells do it. */
int record_exit_status(json_object *rec);
/* The record's job id, or fallback if it has none. */
const char *record_id(json_object *rec, const char *fallback);
/* One line: how the job ended (or that it has not). */
void format_outcome(json_object *rec, char *buf, size_t len);
