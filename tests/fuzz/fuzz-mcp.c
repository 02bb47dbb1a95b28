/* SPDX-License-Identifier: MIT */
/* bgrun mcp's readers of what an MCP client sends, and its output cutting.
 *
 * Input: the bytes of stdin as a client would send them, cut into chunks at
 * the points the first byte picks, fed to the line reader (bound 512 here,
 * so long lines happen); every line is parsed, and every tools/call's
 * arguments read by each tool's reader. The whole input is also cut to an
 * output limit as a job's output would be.
 * Checked: the reader never holds more than its bound and emits no more
 * than it was fed; a parse either classifies the line or answers a JSON-RPC
 * error code with a message; the answers built are JSON that reads back;
 * the argument readers succeed or name what was wrong; output text is valid
 * UTF-8 within the limit. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "jsonrpc.h"
#include "mcp-args.h"
#include "mcp-output.h"
#include "mcp-schema.h"

#define BOUND 512

typedef struct State {
        size_t emitted;
} State;

static void check_answer(char *text) {
        FUZZ_CHECK(text, "answer built");
        size_t n = strlen(text);
        FUZZ_CHECK(n > 0 && text[n - 1] == '\n' && !memchr(text, '\n', n - 1), "one line: %s", text);
        json_object *o = json_tokener_parse(text);
        FUZZ_CHECK(o && json_object_is_type(o, json_type_object), "answer reads back: %s", text);
        json_object_put(o);
        free(text);
}

static void read_arguments(json_object *params) {
        json_object *arguments = NULL;

        if (!params || !json_object_object_get_ex(params, "arguments", &arguments))
                return;
        for (size_t t = 0; t < _MCP_TOOL_MAX; t++) {
                McpArgs a = {};
                char *error = NULL;
                int r = mcp_args_read(arguments, mcp_tools[t].name, mcp_tools[t].allowed, mcp_tools[t].required, &a,
                                      &error);
                FUZZ_CHECK(r == 0 || r == -EINVAL, "%d", r);
                if (r < 0) {
                        FUZZ_CHECK(error && strstr(error, "'"), "the refusal names something: %s", error ?: "");
                        free(error);
                        continue;
                }
                FUZZ_CHECK((a.seen & ~mcp_tools[t].allowed) == 0, "only allowed arguments");
                FUZZ_CHECK((a.seen & mcp_tools[t].required) == mcp_tools[t].required, "required ones there");
                if (a.argv)
                        FUZZ_CHECK(a.argv[0], "argv not empty");
                mcp_args_done(&a);
        }
}

static int on_line(const char *line, size_t len, void *userdata) {
        State *s = userdata;
        JsonRpcMessage m = {};
        json_object *id = NULL;
        const char *error = NULL;
        int code;

        if (!line) {
                check_answer(jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, "too long"));
                return 0;
        }
        FUZZ_CHECK(len <= BOUND, "line of %zu over the bound", len);
        s->emitted += len;
        code = jsonrpc_parse(line, len, &m, &id, &error);
        if (code < 0) {
                FUZZ_CHECK(code == JSONRPC_PARSE_ERROR || code == JSONRPC_INVALID_REQUEST, "code %d", code);
                FUZZ_CHECK(error, "a message");
                check_answer(jsonrpc_error(id, code, error));
                json_object_put(id);
                return 0;
        }
        FUZZ_CHECK(!id, "no id handed out on success");
        if (m.kind == JSONRPC_REQUEST) {
                FUZZ_CHECK(m.method && m.id, "a request has a method and an id");
                check_answer(jsonrpc_result(m.id, json_object_new_object()));
                read_arguments(m.params);
        }
        jsonrpc_message_done(&m);
        return 0;
}

static bool valid_utf8(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t k = mcp_utf8_sequence((const uint8_t *) s + i, n - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

static void check_output(const uint8_t *data, size_t size) {
        size_t limit = MCP_OUTPUT_LIMIT_MIN, head_n, tail_n, n;
        uint64_t tail_offset;
        char *text;

        mcp_output_plan(7, size, limit, &head_n, &tail_offset, &tail_n);
        FUZZ_CHECK(head_n <= size && tail_n <= size, "plan within the data");
        OutputChunks c = {
                .head = data, .head_n = head_n, .head_offset = 7,
                .tail = tail_n ? data + size - tail_n : NULL, .tail_n = tail_n, .tail_offset = tail_offset,
        };
        FUZZ_CHECK(mcp_output_format(&c, limit, &text, &n) == 0, "format");
        FUZZ_CHECK(n <= limit, "%zu bytes over the limit %zu", n, limit);
        FUZZ_CHECK(strlen(text) <= n, "NUL-terminated");
        FUZZ_CHECK(valid_utf8(text, n), "valid UTF-8");
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        LineReader r;
        State s = {};
        size_t step;

        if (size < 1)
                return 0;
        step = data[0] ? data[0] : 1;
        data++, size--;

        line_reader_init(&r, BOUND);
        for (size_t i = 0; i < size; i += step) {
                size_t n = size - i < step ? size - i : step;
                FUZZ_CHECK(line_reader_feed(&r, (const char *) data + i, n, on_line, &s) == 0, "feed");
                FUZZ_CHECK(r.len <= BOUND && r.cap <= BOUND, "held %zu (cap %zu) past the bound", r.len, r.cap);
        }
        FUZZ_CHECK(line_reader_finish(&r, on_line, &s) == 0, "finish");
        FUZZ_CHECK(s.emitted <= size, "emitted %zu of %zu", s.emitted, size);
        line_reader_done(&r);

        check_output(data, size);
        return 0;
}
