/* SPDX-License-Identifier: MIT */
/* Reading bgrund's dictionaries by the shared key tables, and what a record
 * says: running or not, how it ended, bgrun's exit status for it. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-json.h"
#include "job-record.h"
#include "macro.h"
#include "record.h"

#define EXIT_TIMEOUT 124 /* as timeout(1) */

json_object *dict_get(json_object *dict, const KeyInfo *key) {
        return bus_json_get(dict, key->name, key->signature);
}

/* The JSON type check again: asking for a string by a key whose signature is
 * "t" is a bug here, and must not read the number's text. */
static json_object *dict_get_typed(json_object *dict, const KeyInfo *key, json_type type) {
        json_object *v = dict_get(dict, key);

        return v && json_object_is_type(v, type) ? v : NULL;
}

const char *dict_get_string(json_object *dict, const KeyInfo *key) {
        json_object *v = dict_get_typed(dict, key, json_type_string);

        return v ? json_object_get_string(v) : NULL;
}

bool dict_get_bool(json_object *dict, const KeyInfo *key, bool *ret) {
        json_object *v = dict_get_typed(dict, key, json_type_boolean);

        if (!v)
                return false;
        *ret = json_object_get_boolean(v);
        return true;
}

bool dict_get_int(json_object *dict, const KeyInfo *key, int64_t *ret) {
        json_object *v;

        if (!streq(key->signature, "i") && !streq(key->signature, "x"))
                return false;
        v = dict_get_typed(dict, key, json_type_int);
        if (!v)
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

bool dict_get_uint(json_object *dict, const KeyInfo *key, uint64_t *ret) {
        json_object *v;

        if (!streq(key->signature, "u") && !streq(key->signature, "t"))
                return false;
        v = dict_get_typed(dict, key, json_type_int);
        if (!v)
                return false;
        *ret = json_object_get_uint64(v);
        return true;
}

/* The record's status, -ENODATA if it has none, -EINVAL if it is not one we know. */
static int record_status(json_object *rec) {
        const char *s = dict_get_string(rec, &record_keys[RECORD_KEY_STATUS]);

        return s ? job_status_from_string(s) : -ENODATA;
}

bool record_is_running(json_object *rec) {
        uint64_t finished_at;
        bool have_finished = dict_get_uint(rec, &record_keys[RECORD_KEY_FINISHED_AT], &finished_at);
        int status = record_status(rec);

        /* A Kill or Stop answered at its confirmation: killed or timed_out
         * from then on, but the end's own fields (exit code, signal, usage)
         * come with finished_at, a few milliseconds later. Not ended yet
         * for whoever waits for them. */
        if ((status == JOB_KILLED || status == JOB_TIMED_OUT) && have_finished && finished_at == 0)
                return true;
        if (status != -ENODATA)
                return status == JOB_RUNNING || status == JOB_QUEUED;
        if (have_finished)
                return finished_at == 0;
        return false; /* know nothing: do not wait forever */
}

bool record_timed_out(json_object *rec) {
        bool timed_out;

        return (dict_get_bool(rec, &record_keys[RECORD_KEY_TIMED_OUT], &timed_out) && timed_out) ||
                record_status(rec) == JOB_TIMED_OUT;
}

int record_signal(json_object *rec) {
        int64_t sig;

        return dict_get_int(rec, &record_keys[RECORD_KEY_SIGNAL], &sig) && sig > 0 ? (int) sig : 0;
}

int record_exit_status(json_object *rec) {
        int64_t code;

        if (record_timed_out(rec))
                return EXIT_TIMEOUT;
        if (record_signal(rec) > 0)
                return 128 + (record_signal(rec) & 0x7f);
        if (dict_get_int(rec, &record_keys[RECORD_KEY_EXIT_CODE], &code) && code >= 0 && code <= 255)
                return (int) code;
        return EXIT_FAILURE;
}

const char *record_id(json_object *rec, const char *fallback) {
        return dict_get_string(rec, &record_keys[RECORD_KEY_ID]) ?: fallback;
}

void format_outcome(json_object *rec, char *buf, size_t len) {
        const char *status = dict_get_string(rec, &record_keys[RECORD_KEY_STATUS]);
        int sig = record_signal(rec);
        int64_t code;

        int st = record_status(rec);

        if (st == JOB_QUEUED)
                snprintf(buf, len, "is still queued");
        else if (st == JOB_RUNNING || (st == -ENODATA && record_is_running(rec)))
                snprintf(buf, len, "is still running");
        else if (record_timed_out(rec))
                snprintf(buf, len, "timed out%s", sig > 0 ? " and was killed" : "");
        else if (sig > 0)
                snprintf(buf, len, "was killed by signal %d (%s)", sig, strsignal(sig));
        else if (dict_get_int(rec, &record_keys[RECORD_KEY_EXIT_CODE], &code) && code >= 0)
                snprintf(buf, len, "%s with status %" PRIi64,
                         record_status(rec) == JOB_FAILED ? "failed" : "exited", code);
        else
                snprintf(buf, len, "%s", status ?: "ended");
}
