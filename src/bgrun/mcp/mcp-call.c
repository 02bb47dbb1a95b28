/* SPDX-License-Identifier: MIT */
/* A tools/call in flight: its bus calls, its waits, its one answer. A
 * failure of bgrund's is the tool's error result, said so that a model
 * knows what to do next; only malformed requests are protocol errors. */

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bgrun/bus-api.h"
#include "bus-errors.h"
#include "bus-json.h"
#include "duration.h"
#include "call.h"
#include "json-util.h"
#include "list.h"
#include "manager-call.h"
#include "log.h"
#include "mcp-call.h"
#include "record.h"
#include "time-util.h"

static const unsigned lane_max[_MCP_LANE_MAX] = {
        [MCP_LANE_PROMPT] = MCP_LANE_PROMPT_MAX,
        [MCP_LANE_WAIT] = MCP_LANE_WAIT_MAX,
        [MCP_LANE_OUTPUT] = MCP_LANE_OUTPUT_MAX,
};

static void queue_remove(McpServer *s, McpCall *c) {
        QUEUE_REMOVE(queue, s->queued[c->lane], c);
        c->queued = sd_bus_message_unref(c->queued);
}

/* A lane has room again: its queued calls go out from the loop, never
 * from under the answer or the free that made the room. */
static void lane_freed(McpServer *s, McpLane lane) {
        assert(s->in_flight[lane] > 0);
        s->in_flight[lane]--;
        if (s->queued[lane].head && s->dispatch)
                (void) sd_event_source_set_enabled(s->dispatch, SD_EVENT_ONESHOT);
}

McpCall *mcp_call_free(McpCall *c) {
        if (!c)
                return NULL;
        McpServer *s = c->server;
        if (s) {
                LIST_REMOVE(s->calls, c);
                mcp_wait_forget(c);
                (void) mcp_call_set_waiting(c, false);
                s->calls_held -= c->held;
                if (c->queued)
                        queue_remove(s, c);
                if (c->slot)
                        lane_freed(s, c->lane);
                mcp_input_update(s);
        }
        sd_bus_slot_unref(c->slot);
        json_object_put(c->request_id);
        json_object_put(c->progress_token);
        mcp_args_done(&c->args);
        json_object_put(c->arguments);
        json_object_put(c->record);
        json_object_put(c->answer);
        free(c->job_id);
        free(c->head);
        free(c->tail);
        free(c);
        return NULL;
}

static bool ids_equal(json_object *a, json_object *b) {
        if (json_object_get_type(a) != json_object_get_type(b))
                return false;
        if (json_object_is_type(a, json_type_int))
                return json_object_get_int64(a) == json_object_get_int64(b);
        return json_object_is_type(a, json_type_string) && streq(json_object_get_string(a), json_object_get_string(b));
}

McpCall *mcp_call_find(McpServer *s, json_object *request_id) {
        for (McpCall *c = s->calls; c; c = c->next)
                if (ids_equal(c->request_id, request_id))
                        return c;
        return NULL;
}

/* The most the answer of a call of tool is counted as taking before it
 * comes (mcp-server.h): a result with output holds up to output_limit of
 * it, escaped as JSON, in text and in structuredContent. */
static size_t answer_reserve(const McpServer *s, McpTool tool) {
        switch (tool) {
        case MCP_TOOL_RUN:
        case MCP_TOOL_OUTPUT:
        case MCP_TOOL_WRITE_INPUT:
        case MCP_TOOL_WAIT:
        case MCP_TOOL_STOP:
                return 2 * s->options.output_limit + 8192;
        case MCP_TOOL_LIST:
                return 65536;
        default:
                return 8192;
        }
}

int mcp_call_set_waiting(McpCall *c, bool waiting) {
        McpServer *s = c->server;
        if (c->waiting == waiting)
                return 0;
        if (waiting && (s->n_waits >= MCP_WAITS_MAX || s->waits_held + c->request_held > MCP_WAITS_HELD_MAX))
                return mcp_call_fail(c, "This server has %u calls waiting already, the most it keeps (or they hold "
                                     "%zu bytes): let some end or cancel them, then wait again. The job is not "
                                     "affected.", s->n_waits, s->waits_held);
        c->waiting = waiting;
        /* A wait holds no one's input up, and while it waits it holds its
         * request alone; its answer is counted again once it has ended. */
        if (waiting) {
                s->n_waits++;
                s->waits_held += c->request_held;
                s->calls_held -= c->held;
        } else {
                s->n_waits--;
                s->waits_held -= c->request_held;
                s->calls_held += c->held;
        }
        mcp_input_update(s);
        return 0;
}

/* What tool may wait besides the call deadline (the contract's rule): a
 * run its wait_sec, output and write_input theirs, a wait its timeout_sec,
 * a stop its grace and the final fields; kill and the rest nothing. */
static uint64_t tool_allowance(McpTool tool, const McpArgs *a) {
        switch (tool) {
        case MCP_TOOL_RUN:
                return mcp_args_has(a, MCP_ARG_WAIT_SEC) ? a->wait_usec : RUN_WAIT_DEFAULT_USEC;
        case MCP_TOOL_OUTPUT:
                return mcp_args_has(a, MCP_ARG_WAIT_SEC) ? a->wait_usec : 0;
        case MCP_TOOL_WRITE_INPUT:
                return mcp_args_has(a, MCP_ARG_WAIT_SEC) ? a->wait_usec : WRITE_INPUT_WAIT_DEFAULT_USEC;
        case MCP_TOOL_WAIT:
                return mcp_args_has(a, MCP_ARG_TIMEOUT_SEC) ? a->timeout_usec : WAIT_TIMEOUT_DEFAULT_USEC;
        case MCP_TOOL_STOP:
                /* Without grace_sec the job's own applies, which only bgrund knows. */
                return (mcp_args_has(a, MCP_ARG_GRACE_SEC) ? MIN(a->grace_usec, STOP_GRACE_LIMIT_USEC)
                                                           : STOP_GRACE_LIMIT_USEC) + STOP_FINAL_FIELDS_USEC;
        default:
                return 0;
        }
}

int mcp_call_start(McpServer *s, json_object *request_id, json_object *meta, McpTool tool,
                   json_object *arguments, McpArgs *args, size_t request_bytes, McpCall **ret) {
        McpCall *c;
        json_object *token;

        c = calloc(1, sizeof *c);
        if (!c) {
                mcp_args_done(args);
                return -ENOMEM;
        }
        c->server = s;
        LIST_PREPEND(s->calls, c);
        c->request_held = request_bytes + sizeof *c + 512; /* the call, its arguments parsed */
        c->held = c->request_held + answer_reserve(s, tool);
        s->calls_held += c->held;
        mcp_input_update(s);
        c->request_id = json_object_get(request_id);
        if (meta && json_object_object_get_ex(meta, "progressToken", &token) &&
            (json_object_is_type(token, json_type_string) || json_object_is_type(token, json_type_int)))
                c->progress_token = json_object_get(token);
        c->arguments = json_object_get(arguments);
        c->tool = tool;
        c->args = TAKE_STRUCT(*args);
        c->started = c->last_progress = now_monotonic_usec();
        uint64_t allowed = tool_allowance(tool, &c->args);
        c->answer_by = s->call_timeout_usec >= UINT64_MAX / 2 || allowed >= UINT64_MAX / 4
                ? UINT64_MAX : c->started + s->call_timeout_usec + allowed;
        c->max_bytes = UINT64_MAX;

        *ret = c;
        return 0;
}

int mcp_new_call(McpCall *c, const char *method, sd_bus_message **ret) {
        int r = sd_bus_message_new_method_call(c->server->bus, ret, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH,
                                               BGRUN_MANAGER_INTERFACE, method);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the %s call: %s", method, strerror(-r));
        return 0;
}

int mcp_run_request_id(McpCall *c) {
        if (c->args.request_id) {
                snprintf(c->run_request_id, sizeof c->run_request_id, "%s", c->args.request_id);
                return 0;
        }
        uint8_t bits[16];
        ssize_t n = getrandom(bits, sizeof bits, 0);
        if (n != (ssize_t) sizeof bits)
                return n < 0 ? -errno : -EIO;
        char *p = stpcpy(c->run_request_id, "mcp-");
        for (size_t i = 0; i < sizeof bits; i++)
                p += sprintf(p, "%02x", bits[i]);
        return 0;
}

/* What is certain when bgrund did not answer c's method in time: never
 * "try again" where doing it twice could do it twice. Written to buf. */
static const char *timeout_truth(const McpCall *c, char *buf, size_t len) {
        const char *method = c->method;
        if (streq(method, "Launch") && c->run_request_id[0]) {
                snprintf(buf, len, "The job may have started or not (request_id \"%s\"): a run with request_id \"%s\" "
                         "answers that job if it started, and starts it once if it did not.",
                         c->run_request_id, c->run_request_id);
                return buf;
        }
        if (streq(method, "Launch"))
                return "The job may have started or not: look for it with list before running the command again.";
        if (streq(method, "Kill") || streq(method, "Stop"))
                return "It may still take effect: look at the job with status.";
        if (streq(method, "WriteInput"))
                return "The input may have been written or not: look at the job's output before writing again.";
        return "Nothing was changed by this call.";
}

/* What a model should read for bgrund's error: what happened, what to do. */
static int fail_bus_error(McpCall *c, const sd_bus_error *e, int r) {
        const char *msg = e && e->message && e->message[0] ? e->message : strerror(r < 0 ? -r : EIO);
        char deadline[FORMAT_DURATION_MAX], truth[512];

        const BgrunErrorInfo *i = bus_error_info(e);
        if (i) {
                _cleanup_free_ char *line = bgrun_error_line(i, msg, i->mcp_advice);
                return mcp_call_fail(c, "%s", line ?: msg);
        }
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY) || r == -ETIMEDOUT)
                return mcp_call_fail(c, "bgrund did not answer %s within the call deadline (%s): it may be "
                                     "overloaded or stuck. %s", c->method,
                                     format_duration(deadline, sizeof deadline, c->server->call_timeout_usec),
                                     timeout_truth(c, truth, sizeof truth));
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return mcp_call_fail(c, "bgrund is not running (%s). It has to be started by an administrator "
                                     "(systemctl start bgrund.service, or systemctl --user for bgrun mcp --user).",
                                     msg);
        return mcp_call_fail(c, "%s failed: %s", c->method, msg);
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        McpCall *c = userdata;
        const sd_bus_error *e;

        c->slot = sd_bus_slot_unref(c->slot);
        lane_freed(c->server, c->lane);
        e = sd_bus_message_get_error(m);
        if (e && !c->step_takes_errors)
                return fail_bus_error(c, e, -sd_bus_message_get_errno(m)), 0;
        c->step_takes_errors = false;
        (void) c->step(c, m);
        return 0;
}

static int send_now(McpCall *c, sd_bus_message *m, uint64_t timeout) {
        McpServer *s = c->server;
        uint64_t now = now_monotonic_usec();
        /* However the steps add up (Kill's teardown, a Wait and its Get),
         * the tool answers by answer_by. */
        timeout = MIN(timeout ?: s->call_timeout_usec, c->answer_by > now ? c->answer_by - now : 1);
        int r = sd_bus_call_async(s->bus, &c->slot, m, on_reply, c, timeout);
        if (r < 0)
                return fail_bus_error(c, NULL, r);
        s->in_flight[c->lane]++;
        return 0;
}

bool mcp_lane_has_room(const McpServer *s, McpLane lane) {
        return s->in_flight[lane] < lane_max[lane] && !s->queued[lane].head;
}

int mcp_call_bus(McpCall *c, sd_bus_message *m, uint64_t timeout, McpStep step) {
        return mcp_call_bus_lane(c, m, timeout, step, c->waiting ? MCP_LANE_WAIT : MCP_LANE_PROMPT);
}

int mcp_call_bus_lane(McpCall *c, sd_bus_message *m, uint64_t timeout, McpStep step, McpLane lane) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = m;
        McpServer *s = c->server;

        snprintf(c->method, sizeof c->method, "%s", sd_bus_message_get_member(m) ?: "?");
        c->step = step;
        c->lane = lane;
        if (s->in_flight[c->lane] < lane_max[c->lane] && !s->queued[c->lane].head)
                return send_now(c, msg, timeout);
        /* No room: in line behind the lane's others, in order. */
        c->queued = TAKE_PTR(msg);
        c->queued_timeout = timeout;
        QUEUE_APPEND(queue, s->queued[c->lane], c);
        return 0;
}

static int on_dispatch(sd_event_source *source, void *userdata) {
        McpServer *s = userdata;
        for (McpLane lane = 0; lane < _MCP_LANE_MAX; lane++)
                while (!s->ending && s->queued[lane].head && s->in_flight[lane] < lane_max[lane]) {
                        McpCall *c = s->queued[lane].head;
                        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = TAKE_PTR(c->queued);
                        QUEUE_REMOVE(queue, s->queued[lane], c);
                        (void) send_now(c, m, c->queued_timeout);
                }
        return 0;
}

int mcp_calls_init(McpServer *s) {
        int r = sd_event_add_defer(s->event, &s->dispatch, on_dispatch, s);
        return r < 0 ? r : sd_event_source_set_enabled(s->dispatch, SD_EVENT_OFF);
}

static json_object *text_content(const char *text) {
        _cleanup_json_ json_object *content = json_object_new_array(), *block = json_object_new_object();

        if (!content || !block || json_add_str(block, "type", "text") < 0 ||
            json_object_object_add(block, "text", json_object_new_string(text)) < 0 ||
            json_object_array_add(content, TAKE_PTR(block)) < 0)
                return NULL;
        return TAKE_PTR(content);
}

static int answer(McpCall *c, const char *text, json_object *structured, bool error) {
        _cleanup_json_ json_object *result = json_object_new_object(), *st = structured;
        int r;

        if (c->cancelled) {
                /* Nobody waits for it. */
                mcp_call_free(c);
                return 0;
        }
        if (!result)
                return log_oom();
        r = json_add(result, "content", text_content(text));
        if (r >= 0 && st && mcp_has_structured(c->server))
                r = json_add(result, "structuredContent", TAKE_PTR(st));
        if (r >= 0)
                r = json_add_bool(result, "isError", error);
        if (r < 0)
                return log_oom();
        mcp_send(c->server, jsonrpc_result(c->request_id, TAKE_PTR(result)));
        mcp_call_free(c);
        return 0;
}

static int on_cancel_stop_answer(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e && !sd_bus_error_has_name(e, BGRUN_ERROR_NO_SUCH_JOB))
                log_error("Failed to stop the job of a cancelled run: %s", e->message ?: e->name);
        return 0;
}

void mcp_stop_job(McpServer *s, const char *id) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(s->bus, &m, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE,
                                               "Stop");
        if (r >= 0)
                r = sd_bus_message_append(m, "sa{sv}", id, 0);
        if (r >= 0)
                r = sd_bus_call_async(s->bus, NULL, m, on_cancel_stop_answer, s, call_timeout(CALL_TIMEOUT_STOP));
        if (r < 0)
                log_error_errno(r, "Failed to stop job %s of a cancelled run: %m", id);
        else
                log_debug("Stopping job %s: its run was cancelled.", id);
}

void mcp_call_cancel(McpCall *c) {
        bool stops = c->tool == MCP_TOOL_RUN && !c->args.request_id;
        if (stops && c->job_id) {
                mcp_stop_job(c->server, c->job_id);
                mcp_call_free(c);
                return;
        }
        if (stops && c->slot && streq(c->method, "Launch")) {
                c->cancelled = true; /* on_launched() stops it */
                return;
        }
        mcp_call_free(c); /* a Launch not sent yet is never sent */
}

int mcp_call_answer(McpCall *c, const char *text, json_object *structured) {
        return answer(c, text, structured, false);
}

int mcp_call_fail(McpCall *c, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&text, fmt, ap);
        va_end(ap);
        if (r < 0)
                text = NULL;
        answer(c, text ?: "Out of memory.", NULL, true);
        return -EIO;
}

int mcp_call_take_record(McpCall *c, sd_bus_message *reply) {
        _cleanup_json_ json_object *rec = NULL;
        int r;

        r = bus_json_read(reply, &rec);
        if (r <= 0 || !json_object_is_type(rec, json_type_object))
                return mcp_call_fail(c, "bgrund's answer to %s could not be read: %s", c->method,
                                     strerror(r < 0 ? -r : EBADMSG));
        json_object_put(c->record);
        c->record = TAKE_PTR(rec);
        if (c->job_id && !record_is_running(c->record))
                mcp_job_ended(c->server, c->job_id);
        return 0;
}

void mcp_wait_forget(McpCall *c) {
        c->recheck = false;
        c->wait_timer = sd_event_source_disable_unref(c->wait_timer);
        if (c->following)
                LIST_REMOVE_F(waiter, c->server->waiters, c);
        c->following = false;
}
