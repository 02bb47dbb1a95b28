/* SPDX-License-Identifier: MIT */
#pragma once

/* The arguments of the tools, read from a tools/call's "arguments" object by
 * type: an unknown argument, one of the wrong type or out of range, or a
 * missing one is refused with a message that names it (answered -32602).
 * Pure: strings stay borrowed from the JSON object. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* The arguments that give a Launch option of run's job, one row each:
 * enum suffix, name, type, McpArgs field, the LaunchOption it gives (its
 * value as the argument's type reads it; 0 for an option whose least is 1:
 * not given), and its property in run's input schema. A new one is a row
 * here and nothing else. */
#define MCP_LAUNCH_ARG_TABLE(X)                                                                                 \
        X(ARGV, "argv", STRV, argv, ARGV,                                                                       \
          "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,"                                   \
          "\"description\":\"Program and arguments, instead of command\"}")                                     \
        X(TIMEOUT_SEC, "timeout_sec", SECONDS, timeout_usec, MAX_RUNTIME_USEC,                                  \
          "{\"type\":\"number\",\"minimum\":0,\"description\":\"Wall-clock limit: the job is stopped after "     \
          "this many seconds\"}")                                                                               \
        X(TTY, "tty", BOOL, tty, TTY,                                                                           \
          "{\"type\":\"boolean\",\"description\":\"Run on a terminal (for programs that need one)\"}")            \
        X(QUEUE, "queue", BOOL, queue, QUEUE,                                                                   \
          "{\"type\":\"boolean\",\"description\":\"When the job cannot start now (the user's limit of running "    \
          "jobs, or the session's parallel), wait in bgrund's queue instead of failing: the answer comes at once " \
          "with status queued, and the job starts in launch order\"}")                                          \
        X(PARALLEL, "parallel", UINT, parallel, MAX_PARALLEL,                                                   \
          "{\"type\":\"integer\",\"minimum\":1,\"description\":\"At most this many jobs of the session run at "   \
          "once (with queue, the rest wait; without, a run past it fails)\"}")

/* The others: enum suffix, name, type, McpArgs field. */
#define MCP_ARG_TABLE(X)                                                                                        \
        X(ID, "id", STRING, id)                                                                                 \
        X(COMMAND, "command", STRING, command)                                                                  \
        X(CWD, "cwd", STRING, cwd)                                                                              \
        X(ENV, "env", ENV, env)                                                                                 \
        X(SESSION, "session", STRING, session)                                                                  \
        X(STDIN, "stdin", BOOL, stdin_pipe)                                                                     \
        X(WAIT_SEC, "wait_sec", SECONDS, wait_usec)                                                             \
        X(OFFSET, "offset", UINT, offset)                                                                       \
        X(MAX_BYTES, "max_bytes", UINT, max_bytes)                                                              \
        X(TEXT, "text", STRING, text)                                                                           \
        X(EOF, "eof", BOOL, eof)                                                                                \
        X(GRACE_SEC, "grace_sec", SECONDS, grace_usec)                                                          \
        X(SIGNAL, "signal", SIGNAL, signal)                                                                     \
        X(REQUEST_ID, "request_id", STRING, request_id)                                                         \
        X(SANDBOX, "sandbox", STRING, sandbox_name)                                                             \
        X(NETWORK, "network", BOOL, network)

/* The Launch ones first: MCP_ARG_x below _MCP_LAUNCH_ARG_END give an option. */
#define MCP_ARG_ENUM(e, ...) MCP_ARG_##e,
typedef enum McpArg {
        MCP_LAUNCH_ARG_TABLE(MCP_ARG_ENUM)
        MCP_ARG_TABLE(MCP_ARG_ENUM)
        _MCP_ARG_MAX,
} McpArg;
#undef MCP_ARG_ENUM
#define MCP_ARG_COUNT(e, ...) _MCP_LAUNCH_ARG_##e,
enum { MCP_LAUNCH_ARG_TABLE(MCP_ARG_COUNT) _MCP_LAUNCH_ARG_END };
#undef MCP_ARG_COUNT

/* Run's input schema's properties of MCP_LAUNCH_ARG_TABLE, as one string
 * literal: ,"argv":{...},"timeout_sec":{...}... */
#define MCP_LAUNCH_ARG_SCHEMA(e, name, type, field, option, schema) ",\"" name "\":" schema
#define MCP_LAUNCH_ARG_PROPERTIES MCP_LAUNCH_ARG_TABLE(MCP_LAUNCH_ARG_SCHEMA)

#define MCP_ARG_BIT(a) (1U << (a))
_Static_assert(_MCP_ARG_MAX <= 32, "an McpArgs seen holds 32 arguments");

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

struct LaunchArgs;
/* The Launch options a's arguments of MCP_LAUNCH_ARG_TABLE give, set on l
 * (values point into a). */
void mcp_args_launch_options(const McpArgs *a, struct LaunchArgs *l);

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
