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
#include "list.h"
#include "mcp-args.h"
#include "mcp-schema.h"

typedef struct McpOptions {
        const char *session;          /* NULL: "mcp-" and a random suffix */
        bool keep_jobs;               /* launch unbound, leave them running at the end */
        size_t output_limit;          /* bytes of output per result */
        bool remote;                  /* -H: nothing of the local environment goes to jobs */
        int sandbox;                  /* --sandbox: the floor of every run (a SandboxProfile) */
        bool network;                 /* --network: a floor's runs may keep the network */
        char *const *allowed_domains; /* --allow-domain: a floor's runs reach these names only (AllowedDomains) */
        const char *workspace;        /* the directory of a call without cwd (and with a floor the writable one),
                                       * absolute, fixed at start; NULL: the server's cwd */
        char *const *writable;        /* --writable: more writable directories of a workspace floor, real paths */
        bool no_protect_git;          /* --no-protect-git: ProtectGit=no in every sandboxed run */
} McpOptions;

typedef struct OutBuffer OutBuffer;
typedef struct McpCall McpCall;
typedef struct McpWatch McpWatch;

/* Calls to bgrund in flight are bounded per connection (the bus daemon
 * refuses a connection's 129th pending call), so each lane has a number it
 * may have in flight and queues the rest: the calls of waits never take
 * the room of a kill, a stop or a status. Together with the Stops of the
 * end (32 at a time, while calls given up on may still be pending at the
 * daemon) they stay within that 128. */
typedef enum McpLane {
        MCP_LANE_PROMPT, /* every call but a wait's */
        MCP_LANE_WAIT,   /* a wait's: the record looked at again */
        MCP_LANE_OUTPUT, /* a waiting read's WaitOutput (the contract: at most 32 at a time) */
        _MCP_LANE_MAX,
} McpLane;
#define MCP_LANE_PROMPT_MAX 40U
#define MCP_LANE_WAIT_MAX 24U
#define MCP_LANE_OUTPUT_MAX 32U
/* What a client that sends and never reads makes the server hold is
 * counted as it is used: the answers queued for stdout, and for each call
 * under way its request line and the most its answer takes (output tools:
 * twice --output-limit, escaped; others a fixed part). Past
 * MCP_HELD_MAX, stdin is not read until half of it is left.
 *
 * A call that waits (for a job's end, its output, a deadline) is counted
 * apart: it may wait for what only a later request does (a kill), so it
 * never holds stdin up; instead at most MCP_WAITS_MAX of them, holding at
 * most MCP_WAITS_HELD_MAX of requests, wait at once, and one more is
 * refused. Its answer counts again once it has ended. */
#define MCP_HELD_MAX (64U * 1024U * 1024U)
#define MCP_WAITS_MAX 4096U
#define MCP_WAITS_HELD_MAX (64U * 1024U * 1024U)

typedef struct McpServer {
        sd_event *event;
        sd_bus *bus;
        McpOptions options;
        char *session;
        uint64_t call_timeout_usec;   /* each call to bgrund: BGRUN_CALL_TIMEOUT, default 30 s */
        bool bind_jobs;               /* send BindToCaller */
        bool no_wait_output;          /* bgrund has no WaitOutput (older): waiting reads poll */
        char *sandbox_words;          /* the sandbox as it is (mcp_sandbox_describe()), for the model */

        LineReader reader;
        size_t line_bytes;            /* of the line being handled */
        sd_event_source *input_source, *output_source;
        sd_event_source *output_broken_source; /* the end, once stdout's reader is gone */
        OutBuffer *out_head, *out_tail;
        size_t out_bytes;             /* queued for stdout */
        bool output_broken;

        char *protocol_version;       /* negotiated at initialize */
        McpCall *calls;               /* pending tools/calls */
        size_t calls_held;            /* what the calls that do not wait hold (see MCP_HELD_MAX) */
        unsigned n_waits;             /* the calls that wait, and what they hold */
        size_t waits_held;
        unsigned in_flight[_MCP_LANE_MAX];
        QUEUE(McpCall) queued[_MCP_LANE_MAX]; /* calls waiting for room, oldest first */
        sd_event_source *dispatch;    /* sends queued calls once a lane has room */
        McpWatch *watch;              /* bgrund's JobRemoved, for the waits */
        McpCall *waiters;             /* the waits that follow it */
        json_object *cursors;         /* job id → where this server's last read stopped */
        json_object *jobs;            /* job id → null: jobs launched here and not seen ended */
        json_object *launched;        /* job id → the sandbox profile it was launched with: every job of here */

        bool ending;
        unsigned stops_pending;
        char **stops;                 /* jobs still to stop at the end */
        size_t n_stops, next_stop;
        int exit_status;
} McpServer;

/* The newest protocol version spoken, which a client that asks for one
 * unknown gets. */
#define MCP_PROTOCOL_LATEST "2025-11-25"

/* mcp-session.c: what the server holds for its client. */

/* The protocol version as a date, to compare: whether it has output
 * schemas and structuredContent. */
bool mcp_has_structured(const McpServer *s);

/* Queues one message (text with its newline; taken; NULL means out of
 * memory and is logged) for stdout. */
void mcp_send(McpServer *s, char *text);
/* Writes what stdout takes now; the rest waits for it to be writable. */
void mcp_flush_output(McpServer *s);
/* Drops what is queued for stdout (the server's end). */
void mcp_output_drop(McpServer *s);
/* Whether stdin is read: not while too much is queued or under way. */
void mcp_input_update(McpServer *s);

/* mcp-protocol.c: one line from stdin (NULL: a line over the bound, dropped). */
int mcp_handle_line(const char *line, size_t len, void *userdata);

/* Ends the server: stops its running jobs unless --keep-jobs, then leaves
 * the loop with status. */
void mcp_end(McpServer *s, int status);

/* mcp-session.c: where this server's reading of job id stopped (0 if
 * never), and keeping it. */
uint64_t mcp_cursor_get(McpServer *s, const char *id);
void mcp_cursor_set(McpServer *s, const char *id, uint64_t offset);
/* A job of this server, running or not as far as it knows, launched with
 * the sandbox profile named sandbox. */
void mcp_job_add(McpServer *s, const char *id, const char *sandbox);
/* The profile job id was launched with here, or NULL: not a job of this server's. */
const char *mcp_job_sandbox(McpServer *s, const char *id);
void mcp_job_ended(McpServer *s, const char *id);

/* Runs the server until its input ends or a signal; returns the exit status. */
int mcp_serve(sd_bus *bus, const McpOptions *o);
