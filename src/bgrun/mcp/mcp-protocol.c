/* SPDX-License-Identifier: MIT */
/* The protocol's methods: initialize and its version negotiation, ping,
 * tools/list, tools/call; notifications/cancelled. A malformed request is
 * a JSON-RPC error; everything after that is the tool's to answer. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "json-util.h"
#include "log.h"
#include "mcp-call.h"
#include "mcp-sandbox.h"
#include "mcp-server.h"

/* Newest first: an unknown version the client asks for gets the first. */
static const char *const protocol_versions[] = { MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05" };

/* A call's tool started, once the server's sandbox floor allows it: from
 * here on the call answers (a failure to even send is the tool's error). */
static int tool_start(McpCall *c) {
        static int (*const starts[_MCP_TOOL_MAX])(McpCall *c) = {
                [MCP_TOOL_RUN] = mcp_tool_run,       [MCP_TOOL_OUTPUT] = mcp_tool_output,
                [MCP_TOOL_WRITE_INPUT] = mcp_tool_write_input, [MCP_TOOL_WAIT] = mcp_tool_wait,
                [MCP_TOOL_STOP] = mcp_tool_stop,     [MCP_TOOL_KILL] = mcp_tool_kill,
                [MCP_TOOL_STATUS] = mcp_tool_status, [MCP_TOOL_LIST] = mcp_tool_list,
                [MCP_TOOL_FORGET] = mcp_tool_forget,
        };
        _cleanup_free_ char *refused = NULL;
        int r = mcp_sandbox_check_call(&c->server->options, c->server->session, c->tool, &c->args,
                                       c->args.id && mcp_job_sandbox(c->server, c->args.id), &refused);
        if (r == -ENOMEM)
                return mcp_call_fail(c, "Out of memory.");
        if (r < 0)
                return mcp_call_fail(c, "%s", refused);
        return starts[c->tool](c);
}

_printf_(4, 5) static int reply_error(McpServer *s, json_object *id, int code, const char *fmt, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r < 0)
                return log_oom();
        mcp_send(s, jsonrpc_error(id, code, message));
        return 0;
}

static json_object *params_get(json_object *params, const char *key) {
        json_object *v = NULL;
        return params && json_object_object_get_ex(params, key, &v) ? v : NULL;
}

static int handle_initialize(McpServer *s, const JsonRpcMessage *m) {
        _cleanup_json_ json_object *result = json_object_new_object(), *info = json_object_new_object(),
                                   *caps = json_object_new_object();
        json_object *asked = params_get(m->params, "protocolVersion");
        const char *version = protocol_versions[0];
        int r;

        if (!asked || !json_object_is_type(asked, json_type_string))
                return reply_error(s, m->id, JSONRPC_INVALID_PARAMS, "initialize needs params.protocolVersion (a string)");
        for (size_t i = 0; i < ELEMENTSOF(protocol_versions); i++)
                if (streq(json_object_get_string(asked), protocol_versions[i]))
                        version = protocol_versions[i];
        free(s->protocol_version);
        s->protocol_version = strdup(version);
        if (!s->protocol_version || !result || !info || !caps)
                return log_oom();

        r = json_add_str(result, "protocolVersion", version);
        if (r >= 0)
                r = json_add(caps, "tools", json_object_new_object());
        if (r >= 0)
                r = json_add(result, "capabilities", TAKE_PTR(caps));
        if (r >= 0)
                r = json_add_str(info, "name", "bgrun");
        if (r >= 0)
                r = json_add_str(info, "version", BGRUN_VERSION);
        if (r >= 0)
                r = json_add(result, "serverInfo", TAKE_PTR(info));
        _cleanup_free_ char *instructions = NULL;
        if (r >= 0 && asprintf(&instructions, "%s\n%s", mcp_instructions, s->sandbox_words) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = json_add_str(result, "instructions", instructions);
        if (r < 0)
                return log_oom();
        log_debug("Client asked for protocol %s, speaking %s.", json_object_get_string(asked), version);
        mcp_send(s, jsonrpc_result(m->id, TAKE_PTR(result)));
        return 0;
}

static int handle_tools_list(McpServer *s, const JsonRpcMessage *m) {
        json_object *result;
        int r;

        r = mcp_tools_list(mcp_has_structured(s), s->sandbox_words, &result);
        if (r < 0)
                return log_oom();
        mcp_send(s, jsonrpc_result(m->id, result));
        return 0;
}

static int handle_tools_call(McpServer *s, const JsonRpcMessage *m) {
        json_object *name = params_get(m->params, "name"), *arguments = params_get(m->params, "arguments");
        _cleanup_free_ char *error = NULL;
        McpArgs args = {};
        int tool, r;

        if (!name || !json_object_is_type(name, json_type_string))
                return reply_error(s, m->id, JSONRPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
        tool = mcp_tool_lookup(json_object_get_string(name));
        if (tool < 0)
                return reply_error(s, m->id, JSONRPC_INVALID_PARAMS,
                                   "Unknown tool '%s' (tools/list has them: run, output, write_input, wait, stop, "
                                   "kill, status, list, forget)", json_object_get_string(name));
        r = mcp_args_read(arguments, mcp_tools[tool].name, mcp_tools[tool].allowed, mcp_tools[tool].required, &args,
                          &error);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return reply_error(s, m->id, JSONRPC_INVALID_PARAMS, "%s", error ?: "Invalid arguments");
        if (tool == MCP_TOOL_RUN && mcp_args_has(&args, MCP_ARG_COMMAND) == mcp_args_has(&args, MCP_ARG_ARGV)) {
                mcp_args_done(&args);
                return reply_error(s, m->id, JSONRPC_INVALID_PARAMS,
                                   "Tool 'run' takes exactly one of the arguments 'command' (a shell command line) "
                                   "and 'argv' (an array of words)");
        }
        if (tool == MCP_TOOL_RUN && args.stdin_pipe && args.tty) {
                mcp_args_done(&args);
                return reply_error(s, m->id, JSONRPC_INVALID_PARAMS,
                                   "Arguments 'stdin' and 'tty' cannot both be true: a terminal is the job's input");
        }
        McpCall *c;
        r = mcp_call_start(s, m->id, params_get(m->params, "_meta"), tool, arguments, &args, s->line_bytes, &c);
        if (r < 0)
                return log_oom();
        (void) tool_start(c);
        return 0;
}

static void handle_notification(McpServer *s, const JsonRpcMessage *m) {
        json_object *id;
        McpCall *c;

        if (!streq(m->method, "notifications/cancelled"))
                return; /* initialized, and any other: nothing to do */
        id = params_get(m->params, "requestId");
        c = id ? mcp_call_find(s, id) : NULL;
        if (!c)
                return; /* answered already, or never asked: nothing to cancel */
        log_debug("Request %s cancelled.", json_object_get_string(id));
        mcp_call_cancel(c);
}

static int handle_request(McpServer *s, const JsonRpcMessage *m) {
        if (streq(m->method, "initialize"))
                return handle_initialize(s, m);
        if (streq(m->method, "ping")) {
                mcp_send(s, jsonrpc_result(m->id, json_object_new_object()));
                return 0;
        }
        if (streq(m->method, "tools/list"))
                return handle_tools_list(s, m);
        if (streq(m->method, "tools/call"))
                return handle_tools_call(s, m);
        return reply_error(s, m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found: %s (this server has tools only)",
                           m->method);
}

int mcp_handle_line(const char *line, size_t len, void *userdata) {
        McpServer *s = userdata;
        _cleanup_json_ json_object *id = NULL;
        JsonRpcMessage m = {};
        const char *error = NULL;
        int code;

        if (s->ending)
                return 0;
        if (!line)
                return reply_error(s, NULL, JSONRPC_INVALID_REQUEST,
                                   "Invalid Request: a line over %u bytes was dropped unread", JSONRPC_LINE_MAX);
        if (jsonrpc_line_is_blank(line, len))
                return 0;

        s->line_bytes = len;
        code = jsonrpc_parse(line, len, &m, &id, &error);
        if (code < 0)
                return reply_error(s, id, code, "%s", error);

        if (m.kind == JSONRPC_REQUEST)
                (void) handle_request(s, &m);
        else if (m.kind == JSONRPC_NOTIFICATION)
                handle_notification(s, &m);
        /* Responses: this server sends no requests, so there is nothing to match. */
        jsonrpc_message_done(&m);
        return 0;
}
