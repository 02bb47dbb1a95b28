/* SPDX-License-Identifier: MIT */
#pragma once

/* One tools/call in flight: its request, its arguments, the bus call it
 * waits for, and what it gathered. Answered once, or, cancelled, never. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "launch-options.h"
#include "macro.h"
#include "mcp-args.h"
#include "mcp-schema.h"
#include "mcp-server.h"

typedef int (*McpStep)(McpCall *c, sd_bus_message *reply);

/* The characters of the line a progress notification carries. */
#define MCP_PROGRESS_LINE_MAX 200
/* How often a wait with a progressToken looks at its record, so that a
 * notification can go out that often (mcp-progress.h). */
#define PROGRESS_INTERVAL_USEC (1 * USEC_PER_SEC)
/* In output mode, how often the output's growth is looked at. */
#define OUTPUT_POLL_USEC (250 * USEC_PER_MSEC)

struct McpCall {
        McpServer *server;
        McpCall *next, *prev;

        json_object *request_id;
        json_object *progress_token;   /* NULL: no progress asked for */
        json_object *arguments;        /* holds what args borrows */
        McpTool tool;
        McpArgs args;

        sd_bus_slot *slot;             /* the bus call in flight */
        char method[32];               /* its name, for messages (the message is gone by then) */
        McpStep step;                  /* what its answer goes to */
        bool step_takes_errors;        /* ... an error answer too (else the call fails with it) */
        McpLane lane;                  /* of the call in flight or queued */
        sd_bus_message *queued;        /* a call waiting for room in its lane */
        uint64_t queued_timeout;
        McpCall *queue_next, *queue_prev;

        /* A wait: its calls go in the wait lane; one that follows the
         * subscription is in the server's waiters (mcp-wait.c). */
        bool waiting, following, recheck;
        McpCall *waiter_next, *waiter_prev;
        sd_event_source *wait_timer;
        size_t held;                   /* counted as held: its request line, its answer to come */
        size_t request_held;           /* the request's part of it: all a wait holds while it waits */

        bool cancelled;                /* its request was cancelled: it answers nothing; a run, once bgrund
                                        * answers its Launch, stops the job (mcp_call_cancel()) */
        uint64_t started;              /* CLOCK_MONOTONIC µs */
        uint64_t answer_by;            /* the call deadline after started, and what the call asked to
                                        * wait: no bus call of it outlives this */
        uint64_t deadline;             /* of a wait: when to answer with what there is */
        uint64_t last_progress;
        double progress_sent;
        uint64_t progress_bytes;       /* output bytes the last notification said */
        char progress_line[4 * MCP_PROGRESS_LINE_MAX + 4]; /* the job's last complete line, as told (mcp-progress.h) */
        McpStep after_progress;        /* what follows a notification's read of the output's end */

        /* What the tool gathered. */
        char run_request_id[LAUNCH_REQUEST_ID_MAX + 1]; /* run: the RequestId it launched with */
        const char *run_sandbox;  /* run: the sandbox profile it launched with (static) */
        char *job_id;
        json_object *record;           /* the latest record of the job */
        json_object *answer;           /* a Stop's answer, while its record is awaited */
        bool output_mode;              /* the output tool: a wait that ends at new output too, and a
                                        * read of one range (no head and tail) ending at a line's end */
        bool range_short;              /* ... and more output follows the range read */
        uint64_t offset;               /* where the output read starts */
        uint64_t max_bytes;            /* of the read: UINT64_MAX none */
        uint8_t *head, *tail;
        size_t head_n, tail_n;
        uint64_t tail_offset, next_offset;
        bool complete;
        McpStep after_output;          /* what the read output goes to */
        McpStep after_wait;            /* what the end of a wait goes to */
};

/* run: c->run_request_id, the call's request_id or a new one of 128 random
 * bits ("mcp-" and 32 hex digits). */
int mcp_run_request_id(McpCall *c);

/* What a tool waits when its call does not say (the schema's defaults). */
#define RUN_WAIT_DEFAULT_USEC (10 * USEC_PER_SEC)
#define WAIT_TIMEOUT_DEFAULT_USEC (60 * USEC_PER_SEC)
#define WRITE_INPUT_WAIT_DEFAULT_USEC (1 * USEC_PER_SEC)
/* stop: after the grace, this long for the final fields. */
#define STOP_FINAL_FIELDS_USEC (5 * USEC_PER_SEC)
/* The longest grace a job may have (StopGraceUSec's bound). */
#define STOP_GRACE_LIMIT_USEC (600 * USEC_PER_SEC)

/* The call of tool for request (arguments read already, taken), whose
 * line was request_bytes long (what the call is counted as holding), made
 * and counted; its tool is started by the caller (mcp-protocol.c), and from
 * then on the call answers, whatever happens. */
int mcp_call_start(McpServer *s, json_object *request_id, json_object *meta, McpTool tool,
                   json_object *arguments, McpArgs *args, size_t request_bytes, McpCall **ret);
/* The server's part of the calls: the source that sends queued calls. */
int mcp_calls_init(McpServer *s);
/* notifications/cancelled for c: it answers nothing. A run whose model
 * gave no request_id (so it never learned the job's id) stops its job: at
 * once if bgrund answered the Launch, else once it answers (or the job is
 * never started). Any other tool's call just goes: a cancelled wait or
 * output stops nothing. */
void mcp_call_cancel(McpCall *c);
/* Stop job id (its stop signal, its grace, then cgroup.kill), answered to
 * nobody: a failure is logged. */
void mcp_stop_job(McpServer *s, const char *id);
/* Drops the call without an answer (a cancel, the server's end). */
McpCall *mcp_call_free(McpCall *c);
/* The pending call of request id, or NULL. */
McpCall *mcp_call_find(McpServer *s, json_object *request_id);

/* Sends m (taken) as c's bus call, or queues it behind its lane's (the
 * wait lane while c waits, else the prompt lane); its answer goes to step,
 * a failure becomes the tool's error result. timeout 0: the server's call
 * deadline, counted from when it is sent. */
int mcp_call_bus(McpCall *c, sd_bus_message *m, uint64_t timeout, McpStep step);
/* The same in the lane given. */
int mcp_call_bus_lane(McpCall *c, sd_bus_message *m, uint64_t timeout, McpStep step, McpLane lane);
/* Whether a call sent in lane now goes out at once. */
bool mcp_lane_has_room(const McpServer *s, McpLane lane);
/* A new call of method on bgrund's Manager. */
int mcp_new_call(McpCall *c, const char *method, sd_bus_message **ret);

/* Answers c and frees it: a result with text and structured (taken), or a
 * tool error with a message. */
int mcp_call_answer(McpCall *c, const char *text, json_object *structured);
_printf_(2, 3) int mcp_call_fail(McpCall *c, const char *fmt, ...);

/* The reply's a{sv} record into c->record, updating what the server knows
 * of the job. */
int mcp_call_take_record(McpCall *c, sd_bus_message *reply);

/* c waits from now on, or no more: counted apart (mcp-server.h). */
int mcp_call_set_waiting(McpCall *c, bool waiting);
/* c waits no more (answered, cancelled or freed): it leaves the server's
 * waiters and its timer goes. */
void mcp_wait_forget(McpCall *c);

/* mcp-wait.c: waits, above the calls. */

/* Waits until the job ended, c->deadline passed, or, in output mode,
 * output past c->offset came; then next(c, NULL). It holds no call to
 * bgrund where the server is subscribed, else it waits in Wait calls of a
 * slice each. Refused (the tool's error) when the server has as many
 * waits as it keeps (MCP_WAITS_MAX). */
int mcp_call_wait(McpCall *c, McpStep next);
/* The subscription the waits follow. */
int mcp_watch_start(McpServer *s);
void mcp_watch_free(McpServer *s);
/* c waits with the subscription: 0, or -EAGAIN where there is none. */
int mcp_wait_follow(McpCall *c);
/* Whether c's record says the wait is over. */
bool mcp_wait_over(McpCall *c);

/* The tools, each started on a call whose arguments are read. */
int mcp_tool_run(McpCall *c);
int mcp_tool_output(McpCall *c);
int mcp_tool_write_input(McpCall *c);
int mcp_tool_wait(McpCall *c);
int mcp_tool_stop(McpCall *c);
int mcp_tool_kill(McpCall *c);
int mcp_tool_status(McpCall *c);
int mcp_tool_list(McpCall *c);
int mcp_tool_forget(McpCall *c);

/* Reads the job's output from c->offset as far as the record says and the
 * limit allows (one ReadOutput, two past the limit), then after(c, NULL). */
int mcp_read_output(McpCall *c, McpStep after);
/* The output read, as text for a result (malloc'd). */
int mcp_output_text(McpCall *c, char **ret, size_t *ret_len);
