/* SPDX-License-Identifier: MIT */
#pragma once

/* The arguments of the tools, read from a tools/call's "arguments" object by
 * type: an unknown argument, one of the wrong type or out of range, or a
 * missing one is refused with a message that names it (answered -32602).
 * Pure: strings stay borrowed from the JSON object. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum McpArg {
        MCP_ARG_ID,
        MCP_ARG_COMMAND,
        MCP_ARG_ARGV,
        MCP_ARG_CWD,
        MCP_ARG_ENV,
        MCP_ARG_SESSION,
        MCP_ARG_TIMEOUT_SEC,
        MCP_ARG_STDIN,
        MCP_ARG_TTY,
        MCP_ARG_WAIT_SEC,
        MCP_ARG_OFFSET,
        MCP_ARG_MAX_BYTES,
        MCP_ARG_TEXT,
        MCP_ARG_EOF,
        MCP_ARG_GRACE_SEC,
        MCP_ARG_SIGNAL,
        MCP_ARG_REQUEST_ID,
        MCP_ARG_SANDBOX,
        MCP_ARG_NETWORK,
        MCP_ARG_QUEUE,
        MCP_ARG_PARALLEL,
        _MCP_ARG_MAX,
} McpArg;

#define MCP_ARG_BIT(a) (1U << (a))

/* The longest wait or limit a call may ask for, in seconds: a week. */
#define MCP_SECONDS_MAX (7.0 * 24 * 3600)

typedef struct McpArgs {
        unsigned seen;            /* MCP_ARG_BIT()s of the arguments given */
        const char *id, *command, *cwd, *session, *text, *request_id;
        const char *sandbox_name;
        int sandbox;              /* sandbox_name as a SandboxProfile, with MCP_ARG_SANDBOX */
        const char **argv;        /* NULL-terminated, strings borrowed; the array is ours */
        json_object *env;         /* borrowed; an object whose values are all strings */
        bool stdin_pipe, tty, eof, network, queue;
        uint64_t timeout_usec, wait_usec, grace_usec;
        uint64_t offset, max_bytes, parallel;
        int signal;
} McpArgs;

/* The name of an argument, as the schemas give it. */
const char *mcp_arg_name(McpArg a);

void mcp_args_done(McpArgs *a);

/* Reads arguments (may be NULL: none) for a tool that takes the arguments
 * in allowed and needs those in required. Returns 0, or -EINVAL with a
 * message naming the argument in *ret_error (malloc'd). */
int mcp_args_read(json_object *arguments, const char *tool, unsigned allowed, unsigned required, McpArgs *ret,
                  char **ret_error);

static inline bool mcp_args_has(const McpArgs *a, McpArg arg) {
        return a->seen & MCP_ARG_BIT(arg);
}
