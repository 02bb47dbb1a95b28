/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun mcp: one sd-event loop serving MCP on stdin and stdout, and bgrund
 * on the bus. Each tools/call is an McpCall: a chain of asynchronous bus
 * calls, answered when its last one is, so no call holds up another. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "jsonrpc.h"
#include "mcp-args.h"
#include "mcp-schema.h"

typedef struct McpOptions {
        const char *session;          /* NULL: "mcp-" and a random suffix */
        bool keep_jobs;               /* launch unbound, leave them running at the end */
        size_t output_limit;          /* bytes of output per result */
        bool remote;                  /* -H: nothing of the local environment goes to jobs */
} McpOptions;

typedef struct OutBuffer OutBuffer;
typedef struct McpCall McpCall;

typedef struct McpServer {
        sd_event *event;
        sd_bus *bus;
        McpOptions options;
        char *session;
        uint64_t call_timeout_usec;   /* each call to bgrund: BGRUN_CALL_TIMEOUT, default 30 s */
        bool bind_jobs;               /* send BindToCaller */

        LineReader reader;
        sd_event_source *input_source, *output_source;
        OutBuffer *out_head, *out_tail;
        size_t out_bytes;             /* queued for stdout */
        bool output_broken;

        char *protocol_version;       /* negotiated at initialize */
        McpCall *calls;               /* pending tools/calls */
        json_object *cursors;         /* job id → where this server's last read stopped */
        json_object *jobs;            /* job id → null: jobs launched here and not seen ended */

        bool ending;
        unsigned stops_pending;
        int exit_status;
} McpServer;

/* The protocol version as a date, to compare: whether it has output
 * schemas and structuredContent. */
bool mcp_has_structured(const McpServer *s);

/* Queues one message (text with its newline; taken; NULL means out of
 * memory and is logged) for stdout. */
void mcp_send(McpServer *s, char *text);

/* One line from stdin (NULL: a line over the bound, dropped). */
int mcp_handle_line(const char *line, size_t len, void *userdata);

/* Ends the server: stops its running jobs unless --keep-jobs, then leaves
 * the loop with status. */
void mcp_end(McpServer *s, int status);

/* Where this server's reading of job id stopped (0 if never), and keeping it. */
uint64_t mcp_cursor_get(McpServer *s, const char *id);
void mcp_cursor_set(McpServer *s, const char *id, uint64_t offset);
/* A job of this server, running or not as far as it knows. */
void mcp_job_add(McpServer *s, const char *id);
void mcp_job_ended(McpServer *s, const char *id);

/* Runs the server until its input ends or a signal; returns the exit status. */
int mcp_serve(sd_bus *bus, const McpOptions *o);
