/* SPDX-License-Identifier: MIT */
/* bgrun stop and kill: jobs ended, gracefully or at once, and what bgrund
 * says of their teardown. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bgrun/bus-api.h"
#include "bus-json.h"
#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "print.h"
#include "record.h"
#include "verbs.h"

/* "Job ID killed, nothing of it is left alive (cgroup.kill)." from Kill's
 * or Stop's answer; verb is what a running job had done to it. */
static void print_end_answer(json_object *result, const char *id, const char *verb) {
        json_object *t;
        const char *method;
        bool killed, dead, dead_known;

        t = dict_get(result, &kill_keys[KILL_KEY_TEARDOWN]);
        dead_known = dict_get_bool(t, &teardown_keys[TEARDOWN_KEY_DEAD], &dead);

        if (!dict_get_bool(result, &kill_keys[KILL_KEY_KILLED], &killed))
                killed = false;
        if (killed)
                printf("Job %s %s", id, verb);
        else
                printf("Job %s had ended already", id);
        if (dead_known && dead)
                printf(", nothing of it is left alive");
        /* How this end was made sure of; an ended job's was not this call's. */
        method = killed ? dict_get_string(t, &teardown_keys[TEARDOWN_KEY_METHOD]) : NULL;
        if (method && method[0]) {
                fputs(" (", stdout);
                print_cell(method, SIZE_MAX);
                putchar(')');
        }
        puts(".");

        if (dead_known && !dead)
                log_error("Warning: the teardown of job %s is not confirmed; processes of it may still be alive.", id);
}

static int kill_session(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_json_ json_object *result = NULL;
        json_object *v;
        uint64_t killed = 0;
        bool dead = false, dead_known;
        int r;

        r = manager_new_call(bus, "KillSession", &m, "s", args->session);
        if (r < 0)
                return r;
        r = call_dict(bus, m, call_timeout(CALL_TIMEOUT_TEARDOWN), NULL, &result);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(result);

        if ((v = json_object_object_get(result, "killed")) && json_object_is_type(v, json_type_int))
                killed = json_object_get_uint64(v);
        v = json_object_object_get(result, "dead");
        dead_known = v && json_object_is_type(v, json_type_boolean);
        if (dead_known)
                dead = json_object_get_boolean(v);

        printf("Killed %" PRIu64 " job%s of session ", killed, killed == 1 ? "" : "s");
        print_cell(args->session, SIZE_MAX);
        if (killed > 0 && dead)
                printf(", nothing of %s is left alive", killed == 1 ? "it" : "them");
        puts(".");
        if (dead_known && !dead)
                log_error("Warning: the teardown of some jobs of the session is not confirmed; processes of them may "
                          "still be alive.");
        return EXIT_SUCCESS;
}

/* --json of kill or stop: one job's answer as bgrund gave it; of several,
 * one array of them, each with its "id" first. */
typedef struct JsonAnswers {
        size_t n_jobs;
        json_object *array;
} JsonAnswers;

static int json_answer(JsonAnswers *a, const char *id, json_object *answer) {
        _cleanup_json_ json_object *obj = NULL;

        if (a->n_jobs == 1)
                return print_json(answer);

        if (!a->array && !(a->array = json_object_new_array()))
                return log_oom();
        obj = json_object_new_object();
        if (!obj || json_add_str(obj, record_keys[RECORD_KEY_ID].name, id) < 0)
                return log_oom();
        json_object_object_foreach(answer, key, value)
                if (json_object_object_add(obj, key, json_object_get(value)) < 0)
                        return log_oom();
        if (json_object_array_add(a->array, obj) < 0)
                return log_oom();
        TAKE_PTR(obj);
        return 0;
}

static int json_answers_done(JsonAnswers *a) {
        int r = 0;

        if (a->array)
                r = print_json(a->array);
        json_object_put(a->array);
        a->array = NULL;
        return r;
}

int verb_kill(sd_bus *bus, const Args *args) {
        JsonAnswers answers = { .n_jobs = args->n_words - 1 };
        int ret = EXIT_SUCCESS;

        if (args->session)
                return kill_session(bus, args);

        for (size_t i = 1; i < args->n_words; i++) {
                _cleanup_json_ json_object *result = NULL;
                const char *id = args->words[i];
                int r;

                r = call_id_dict(bus, "Kill", id, NULL, call_timeout(CALL_TIMEOUT_TEARDOWN), &result);
                if (r < 0) {
                        ret = r;
                        continue;
                }
                if (args->json)
                        r = json_answer(&answers, id, result);
                else
                        print_end_answer(result, id, "killed");
                if (r < 0)
                        ret = r;
        }
        if (json_answers_done(&answers) < 0)
                ret = -EIO;
        return ret;
}

int verb_stop(sd_bus *bus, const Args *args) {
        size_t n = args->n_words - 1;
        JsonAnswers answers = { .n_jobs = n };
        _cleanup_free_ PendingCall *calls = calloc(n, sizeof(PendingCall));
        /* The grace given, else the job's own (at most 10 min). */
        uint64_t timeout = (args->options_seen & OPTION_GRACE) ? call_timeout_stop(args->grace_usec)
                                                               : call_timeout(CALL_TIMEOUT_STOP);
        int ret = EXIT_SUCCESS, r = 0;

        if (!calls)
                return log_oom();

        /* All in flight at once: each waits its job's grace in bgrund. */
        for (size_t i = 0; i < n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                r = manager_new_call(bus, "Stop", &m, "s", args->words[i + 1]);
                if (r < 0)
                        goto finish;
                r = sd_bus_message_open_container(m, 'a', "{sv}");
                if (r >= 0 && args->signal > 0)
                        r = sd_bus_message_append(m, "{sv}", "Signal", "i", (int32_t) args->signal);
                if (r >= 0 && (args->options_seen & OPTION_GRACE))
                        r = sd_bus_message_append(m, "{sv}", "GraceUSec", "t", args->grace_usec);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r < 0) {
                        r = log_error_errno(r, "Failed to build Stop call: %m");
                        goto finish;
                }
                r = manager_call_send(bus, m, timeout, &calls[i]);
                if (r < 0)
                        goto finish;
        }

        /* In the order given. */
        for (size_t i = 0; i < n; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                _cleanup_json_ json_object *result = NULL;
                const char *id = args->words[i + 1];

                r = pending_call_reply(bus, &calls[i], &error, &reply);
                if (r < 0) {
                        ret = log_call_error("Stop", id, &error, r);
                        /* A bgrund that does not answer will not answer the others. */
                        if (exit_code_for_error(&error, r) == BGRUN_EXIT_UNREACHABLE)
                                break;
                        continue;
                }
                r = bus_json_read(reply, &result);
                if (r <= 0 || !json_object_is_type(result, json_type_object)) {
                        ret = log_parse_error("Stop", r < 0 ? r : -EBADMSG);
                        continue;
                }
                if (args->json) {
                        if (json_answer(&answers, id, result) < 0)
                                ret = -EIO;
                } else
                        print_end_answer(result, id, "stopped");
        }
        if (json_answers_done(&answers) < 0)
                ret = -EIO;
        r = ret;

finish:
        for (size_t i = 0; i < n; i++)
                pending_call_done(&calls[i]);
        return r;
}
