/* SPDX-License-Identifier: MIT */
/* The tools that look at or end jobs: stop, kill, status, list, forget.
 * Each is one bus call (stop: then a short Wait for the record's final
 * fields), answered as bgrund answered. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-json.h"
#include "json-util.h"
#include "manager-call.h"
#include "mcp-call.h"
#include "record.h"
#include "time-util.h"

/* How long stop waits, after Stop answered, for the record's final fields. */
#define STOP_RECORD_WAIT_USEC (5 * USEC_PER_SEC)
/* The most jobs list shows: a model reads all of it. */
#define LIST_MAX 1000U

static int new_id_call(McpCall *c, const char *method, sd_bus_message **ret) {
        int r;

        c->job_id = strdup(c->args.id);
        if (!c->job_id)
                return mcp_call_fail(c, "Out of memory.");
        r = mcp_new_call(c, method, ret);
        if (r < 0)
                return r;
        r = sd_bus_message_append(*ret, "s", c->job_id);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the %s call: %s", method, strerror(-r));
        return 0;
}

static int read_answer(McpCall *c, sd_bus_message *reply, json_object **ret) {
        int r = bus_json_read(reply, ret);
        if (r <= 0 || !json_object_is_type(*ret, json_type_object)) {
                json_object_put(*ret);
                *ret = NULL;
                return mcp_call_fail(c, "bgrund's answer to %s could not be read: %s", c->method,
                                     strerror(r < 0 ? -r : EBADMSG));
        }
        return 0;
}

static int stop_answer(McpCall *c, sd_bus_message *reply) {
        _cleanup_json_ json_object *st = json_object_new_object();
        json_object *teardown = dict_get(c->answer, &kill_keys[KILL_KEY_TEARDOWN]);
        const char *status = dict_get_string(c->record, &record_keys[RECORD_KEY_STATUS]);
        const char *method = dict_get_string(teardown, &teardown_keys[TEARDOWN_KEY_METHOD]);
        bool dead = false;
        int64_t exit_code = -1;
        char text[512], outcome[128];

        (void) dict_get_bool(teardown, &teardown_keys[TEARDOWN_KEY_DEAD], &dead);
        (void) dict_get_int(c->record, &record_keys[RECORD_KEY_EXIT_CODE], &exit_code);
        format_outcome(c->record, outcome, sizeof outcome);
        snprintf(text, sizeof text, "Job %s %s%s.", c->job_id, outcome,
                 dead ? "; nothing of it is left alive" : "; its teardown is not confirmed");
        if (!st || json_add_str(st, "status", status ?: "unknown") < 0 || json_add_bool(st, "dead", dead) < 0 ||
            json_add_str(st, "method", method ?: "") < 0 || json_add_i64(st, "exit_code", exit_code) < 0 ||
            json_add_i64(st, "signal", record_signal(c->record)) < 0)
                return mcp_call_fail(c, "Out of memory.");
        return mcp_call_answer(c, text, TAKE_PTR(st));
}

static int on_stopped(McpCall *c, sd_bus_message *reply) {
        int r = read_answer(c, reply, &c->answer);
        if (r < 0)
                return r;
        c->deadline = now_monotonic_usec() + STOP_RECORD_WAIT_USEC;
        return mcp_call_wait(c, stop_answer);
}

int mcp_tool_stop(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_id_call(c, "Stop", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && mcp_args_has(&c->args, MCP_ARG_SIGNAL))
                r = sd_bus_message_append(m, "{sv}", "Signal", "i", c->args.signal);
        if (r >= 0 && mcp_args_has(&c->args, MCP_ARG_GRACE_SEC))
                r = sd_bus_message_append(m, "{sv}", "GraceUSec", "t", c->args.grace_usec);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the Stop call: %s", strerror(-r));
        /* Stop answers after the grace (the job's own, up to 10 min, if
         * none is given) and the teardown: the deadline counts from then. */
        return mcp_call_bus(c, TAKE_PTR(m),
                            mcp_args_has(&c->args, MCP_ARG_GRACE_SEC) ? call_timeout_stop(c->args.grace_usec)
                                                                       : call_timeout(CALL_TIMEOUT_STOP),
                            on_stopped);
}

static int on_killed(McpCall *c, sd_bus_message *reply) {
        _cleanup_json_ json_object *answer = NULL, *st = json_object_new_object();
        json_object *teardown;
        const char *method;
        bool dead = false, killed = false;
        uint64_t confirmed_at = 0;
        char text[256];
        int r;

        r = read_answer(c, reply, &answer);
        if (r < 0)
                return r;
        teardown = dict_get(answer, &kill_keys[KILL_KEY_TEARDOWN]);
        method = dict_get_string(teardown, &teardown_keys[TEARDOWN_KEY_METHOD]);
        (void) dict_get_bool(answer, &kill_keys[KILL_KEY_KILLED], &killed);
        (void) dict_get_bool(teardown, &teardown_keys[TEARDOWN_KEY_DEAD], &dead);
        (void) dict_get_uint(teardown, &teardown_keys[TEARDOWN_KEY_CONFIRMED_AT], &confirmed_at);
        mcp_job_ended(c->server, c->job_id);
        snprintf(text, sizeof text, "Job %s %s%s.", c->job_id, killed ? "was killed" : "had ended already",
                 dead ? "; nothing of it is left alive" : "; its teardown is not confirmed");
        if (!st || json_add_bool(st, "dead", dead) < 0 || json_add_str(st, "method", method ?: "") < 0 ||
            json_add_u64(st, "confirmed_at", confirmed_at) < 0)
                return mcp_call_fail(c, "Out of memory.");
        return mcp_call_answer(c, text, TAKE_PTR(st));
}

int mcp_tool_kill(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_id_call(c, "Kill", &m);
        if (r < 0)
                return r;
        return mcp_call_bus(c, TAKE_PTR(m), call_timeout(CALL_TIMEOUT_TEARDOWN), on_killed);
}

static int on_status(McpCall *c, sd_bus_message *reply) {
        _cleanup_free_ char *text = NULL;
        char outcome[128];
        int r;

        r = mcp_call_take_record(c, reply);
        if (r < 0)
                return r;
        format_outcome(c->record, outcome, sizeof outcome);
        if (asprintf(&text, "Job %s %s.\n%s", c->job_id, outcome,
                     json_object_to_json_string_ext(c->record, JSON_C_TO_STRING_PRETTY |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
                return mcp_call_fail(c, "Out of memory.");
        return mcp_call_answer(c, text, json_object_get(c->record));
}

int mcp_tool_status(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_id_call(c, "Get", &m);
        if (r < 0)
                return r;
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_status);
}

static int on_forgotten(McpCall *c, sd_bus_message *reply) {
        char text[128];

        mcp_job_ended(c->server, c->job_id);
        snprintf(text, sizeof text, "Job %s is forgotten: its record and output are gone.", c->job_id);
        return mcp_call_answer(c, text, json_object_new_object());
}

int mcp_tool_forget(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_id_call(c, "Forget", &m);
        if (r < 0)
                return r;
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_forgotten);
}

/* list: pages of ListJobsPaged, gathered in c->answer ({"jobs": [...]}). */
static int list_page(McpCall *c, const char *after);

static const char *list_session(McpCall *c) {
        if (!c->args.session)
                return c->server->session;
        return streq(c->args.session, "*") ? "" : c->args.session;
}

static int list_answer(McpCall *c, bool more) {
        _cleanup_free_ char *text = NULL;
        json_object *jobs = json_object_object_get(c->answer, "jobs");
        size_t n = json_object_array_length(jobs), len = 0;
        FILE *f;

        f = open_memstream(&text, &len);
        if (!f)
                return mcp_call_fail(c, "Out of memory.");
        fprintf(f, "%zu job%s%s%s%s:\n", n, n == 1 ? "" : "s", list_session(c)[0] ? " in session " : "",
                list_session(c), more ? " (the first ones; there are more)" : "");
        for (size_t i = 0; i < n; i++) {
                json_object *j = json_object_array_get_idx(jobs, i);
                fprintf(f, "%s  %-9s  %s\n", json_object_get_string(json_object_object_get(j, "id")),
                        json_object_get_string(json_object_object_get(j, "status")),
                        json_object_get_string(json_object_object_get(j, "command")));
        }
        if (fclose(f) != 0)
                return mcp_call_fail(c, "Out of memory.");
        return mcp_call_answer(c, text, json_object_get(c->answer));
}

static int on_list_page(McpCall *c, sd_bus_message *reply) {
        json_object *jobs = json_object_object_get(c->answer, "jobs");
        const char *id, *session, *status, *command, *path, *next;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(sssso)");
        while (r >= 0) {
                _cleanup_json_ json_object *j = NULL;

                r = sd_bus_message_read(reply, "(sssso)", &id, &session, &status, &command, &path);
                if (r <= 0)
                        break;
                if (json_object_array_length(jobs) >= LIST_MAX)
                        continue;
                j = json_object_new_object();
                if (!j || json_add_str(j, "id", id) < 0 || json_add_str(j, "session", session) < 0 ||
                    json_add_str(j, "status", status) < 0 || json_add_str(j, "command", command) < 0 ||
                    json_object_array_add(jobs, j) < 0)
                        return mcp_call_fail(c, "Out of memory.");
                TAKE_PTR(j);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &next);
        if (r < 0)
                return mcp_call_fail(c, "bgrund's answer to ListJobsPaged could not be read: %s", strerror(-r));
        if (!next[0] || json_object_array_length(jobs) >= LIST_MAX)
                return list_answer(c, next[0]);
        return list_page(c, next);
}

static int list_page(McpCall *c, const char *after) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = mcp_new_call(c, "ListJobsPaged", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ssu", list_session(c), after, LIST_MAX);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the ListJobsPaged call: %s", strerror(-r));
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_list_page);
}

int mcp_tool_list(McpCall *c) {
        c->answer = json_object_new_object();
        if (!c->answer || json_add(c->answer, "jobs", json_object_new_array()) < 0)
                return mcp_call_fail(c, "Out of memory.");
        return list_page(c, "");
}
