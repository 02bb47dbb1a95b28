/* SPDX-License-Identifier: MIT */
#pragma once

/* The tools as a model sees them: name, description, input and output
 * schemas (JSON Schema text), annotations, and the arguments each takes. */

#include <json-c/json.h>
#include <stdbool.h>

#include "mcp-args.h"

typedef enum McpTool {
        MCP_TOOL_RUN,
        MCP_TOOL_OUTPUT,
        MCP_TOOL_WRITE_INPUT,
        MCP_TOOL_WAIT,
        MCP_TOOL_STOP,
        MCP_TOOL_KILL,
        MCP_TOOL_STATUS,
        MCP_TOOL_LIST,
        MCP_TOOL_FORGET,
        _MCP_TOOL_MAX,
} McpTool;

typedef struct McpToolInfo {
        const char *name;
        const char *title;
        const char *description;
        const char *input_schema;  /* JSON text */
        const char *output_schema; /* JSON text */
        bool read_only, destructive, idempotent;
        unsigned allowed, required; /* MCP_ARG_BIT()s */
} McpToolInfo;

extern const McpToolInfo mcp_tools[_MCP_TOOL_MAX];

/* The tool called name, or -ENOENT. */
int mcp_tool_lookup(const char *name);

/* The server's instructions for initialize. */
extern const char mcp_instructions[];

/* tools/list's result: output schemas only where the protocol has them. */
int mcp_tools_list(bool output_schemas, const char *run_sandbox, json_object **ret);
