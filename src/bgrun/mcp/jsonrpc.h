/* SPDX-License-Identifier: MIT */
#pragma once

/* MCP's stdio transport, pure: a bounded line reader (one JSON-RPC message
 * per line) and the parse and classification of one line. No I/O here: the
 * server feeds what it read and writes what these build. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* A line longer than this is refused without being held whole. */
#define JSONRPC_LINE_MAX (4U * 1024U * 1024U)

#define JSONRPC_PARSE_ERROR (-32700)
#define JSONRPC_INVALID_REQUEST (-32600)
#define JSONRPC_METHOD_NOT_FOUND (-32601)
#define JSONRPC_INVALID_PARAMS (-32602)
#define JSONRPC_INTERNAL_ERROR (-32603)

typedef struct LineReader {
        char *buf;
        size_t len, cap;
        size_t max;       /* JSONRPC_LINE_MAX unless a test says */
        bool discarding;  /* inside a line past max: dropped until its newline */
} LineReader;

/* Called once per complete line (without its newline; '\r' before it
 * removed), or with line NULL for a line that was over max and dropped.
 * A negative return stops the feeding and is returned. */
typedef int (*LineHandler)(const char *line, size_t len, void *userdata);

void line_reader_init(LineReader *r, size_t max);
void line_reader_done(LineReader *r);
/* Feeds n bytes; at most max bytes of one line are ever buffered. */
int line_reader_feed(LineReader *r, const char *data, size_t n, LineHandler handler, void *userdata);
/* At the end of input: a last line without newline, if any. */
int line_reader_finish(LineReader *r, LineHandler handler, void *userdata);

typedef enum JsonRpcKind {
        JSONRPC_REQUEST,       /* method and id */
        JSONRPC_NOTIFICATION,  /* method, no id */
        JSONRPC_RESPONSE,      /* result or error, and id: we send no requests, so ignored */
} JsonRpcKind;

typedef struct JsonRpcMessage {
        JsonRpcKind kind;
        json_object *root;     /* owns everything below */
        json_object *id;       /* borrowed; string or integer */
        const char *method;    /* borrowed */
        json_object *params;   /* borrowed; an object, or NULL if none */
} JsonRpcMessage;

void jsonrpc_message_done(JsonRpcMessage *m);

/* Parses one line. On failure returns a JSON-RPC error code (< 0:
 * JSONRPC_PARSE_ERROR or JSONRPC_INVALID_REQUEST) with a message in
 * *ret_error (static) and, if the line had a usable id, *ret_id (a new
 * reference; else NULL, to be answered with id null). Returns 0 on success. */
int jsonrpc_parse(const char *line, size_t len, JsonRpcMessage *ret, json_object **ret_id, const char **ret_error);

/* Whether a line is only whitespace (skipped, not an error). */
bool jsonrpc_line_is_blank(const char *line, size_t len);

/* The text of a response (with its newline), id borrowed (NULL: null).
 * Returns NULL on out of memory. result is taken. */
char *jsonrpc_result(json_object *id, json_object *result);
char *jsonrpc_error(json_object *id, int code, const char *message);
/* A notification; params taken. */
char *jsonrpc_notification(const char *method, json_object *params);
