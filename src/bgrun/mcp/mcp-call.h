/* SPDX-License-Identifier: MIT */
#pragma once

/* One tools/call in flight: its request, its arguments, the bus call it
 * waits for, and what it gathered. Answered once, or, cancelled, never. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "mcp-args.h"
#include "mcp-schema.h"
#include "mcp-server.h"

typedef int (*McpStep)(McpCall *c, sd_bus_message *reply);

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

        uint64_t started;              /* CLOCK_MONOTONIC µs */
        uint64_t deadline;             /* of a wait: when to answer with what there is */
        uint64_t last_progress;
        double progress_sent;

        /* What the tool gathered. */
        char *job_id;
        json_object *record;           /* the latest record of the job */
        json_object *answer;           /* a Stop's answer, while its record is awaited */
        bool output_mode;              /* a wait that ends at new output too */
        uint64_t offset;               /* where the output read starts */
        uint64_t max_bytes;            /* of the read: UINT64_MAX none */
        uint8_t *head, *tail;
        size_t head_n, tail_n;
        uint64_t tail_offset, next_offset;
        bool complete;
        McpStep after_output;          /* what the read output goes to */
        McpStep after_wait;            /* what the end of a wait goes to */
};

/* Starts the call of tool for request (arguments read already). */
int mcp_call_start(McpServer *s, json_object *request_id, json_object *meta, McpTool tool,
                   json_object *arguments, McpArgs *args);
/* Drops the call without an answer (notifications/cancelled, the end). */
McpCall *mcp_call_free(McpCall *c);
/* The pending call of request id, or NULL. */
McpCall *mcp_call_find(McpServer *s, json_object *request_id);

/* Sends m (taken) as c's bus call; its answer goes to step, a failure
 * becomes the tool's error result. timeout 0: the server's call deadline. */
int mcp_call_bus(McpCall *c, sd_bus_message *m, uint64_t timeout, McpStep step);
/* A new call of method on bgrund's Manager. */
int mcp_new_call(McpCall *c, const char *method, sd_bus_message **ret);

/* Answers c and frees it: a result with text and structured (taken), or a
 * tool error with a message. */
int mcp_call_answer(McpCall *c, const char *text, json_object *structured);
_printf_(2, 3) int mcp_call_fail(McpCall *c, const char *fmt, ...);

/* The reply's a{sv} record into c->record, updating what the server knows
 * of the job. */
int mcp_call_take_record(McpCall *c, sd_bus_message *reply);

/* Waits (Wait calls in slices) until the job ended, c->deadline passed,
 * or, in output mode, output past c->offset came; then next(c, NULL). */
int mcp_call_wait(McpCall *c, McpStep next);
/* Sends notifications/progress if asked for and due. */
void mcp_call_progress(McpCall *c);

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
