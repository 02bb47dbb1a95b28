/* SPDX-License-Identifier: MIT */
/* MCP's stdio transport: lines cut from a stream however it is split, a
 * line over the bound refused without being held, and each line classified
 * or refused with the JSON-RPC error it deserves. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "macro.h"

typedef struct Lines {
        char *got[16];
        size_t n;
} Lines;

static int collect(const char *line, size_t len, void *userdata) {
        Lines *l = userdata;

        cr_assert_lt(l->n, 16);
        l->got[l->n++] = line ? strndup(line, len) : strdup("<too long>");
        return 0;
}

static void lines_free(Lines *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->got[i]);
}

Test(line_reader, split_anywhere) {
        const char *input = "{\"a\":1}\n\r\n{\"b\":2}\r\nlast";

        /* Fed in pieces of every size, the lines are the same. */
        for (size_t step = 1; step <= strlen(input); step++) {
                LineReader r;
                Lines l = {};

                line_reader_init(&r, 0);
                for (size_t i = 0; i < strlen(input); i += step)
                        cr_assert_eq(line_reader_feed(&r, input + i, MIN(step, strlen(input) - i), collect, &l), 0);
                cr_assert_eq(line_reader_finish(&r, collect, &l), 0);
                cr_assert_eq(l.n, 4, "step %zu: %zu lines", step, l.n);
                cr_assert_str_eq(l.got[0], "{\"a\":1}");
                cr_assert_str_eq(l.got[1], "");
                cr_assert_str_eq(l.got[2], "{\"b\":2}");
                cr_assert_str_eq(l.got[3], "last");
                lines_free(&l);
                line_reader_done(&r);
        }
}

Test(line_reader, too_long_is_dropped_as_it_streams) {
        LineReader r;
        Lines l = {};
        char chunk[10];

        line_reader_init(&r, 16);
        memset(chunk, 'x', sizeof chunk);
        cr_assert_eq(line_reader_feed(&r, "ok\n", 3, collect, &l), 0);
        /* 100 bytes of one line in chunks: said once, never buffered past 16. */
        for (int i = 0; i < 10; i++) {
                cr_assert_eq(line_reader_feed(&r, chunk, sizeof chunk, collect, &l), 0);
                cr_assert_leq(r.len, 16);
                cr_assert_leq(r.cap, 16);
        }
        cr_assert_eq(line_reader_feed(&r, "xx\nnext\n", 8, collect, &l), 0);
        cr_assert_eq(l.n, 3);
        cr_assert_str_eq(l.got[0], "ok");
        cr_assert_str_eq(l.got[1], "<too long>");
        cr_assert_str_eq(l.got[2], "next");
        lines_free(&l);
        line_reader_done(&r);
}

Test(line_reader, exactly_the_bound_fits) {
        LineReader r;
        Lines l = {};

        line_reader_init(&r, 4);
        cr_assert_eq(line_reader_feed(&r, "abcd\nabcde\n", 11, collect, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.got[0], "abcd");
        cr_assert_str_eq(l.got[1], "<too long>");
        lines_free(&l);
        line_reader_done(&r);
}

static int parse(const char *line, JsonRpcMessage *m, json_object **id, const char **error) {
        return jsonrpc_parse(line, strlen(line), m, id, error);
}

Test(jsonrpc, classify) {
        JsonRpcMessage m = {};
        json_object *id = NULL;
        const char *error = NULL;

        cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &m, &id, &error), 0);
        cr_assert_eq(m.kind, JSONRPC_REQUEST);
        cr_assert_str_eq(m.method, "ping");
        cr_assert_eq(json_object_get_int(m.id), 7);
        cr_assert_null(m.params);
        jsonrpc_message_done(&m);

        cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":{}}", &m, &id,
                           &error), 0);
        cr_assert_eq(m.kind, JSONRPC_NOTIFICATION);
        cr_assert_not_null(m.params);
        jsonrpc_message_done(&m);

        cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", &m, &id, &error), 0);
        cr_assert_eq(m.kind, JSONRPC_RESPONSE);
        jsonrpc_message_done(&m);
}

Test(jsonrpc, refused) {
        static const struct {
                const char *line;
                int code;
                bool id_kept;
        } cases[] = {
                { "not json", JSONRPC_PARSE_ERROR, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", JSONRPC_PARSE_ERROR, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}", JSONRPC_PARSE_ERROR, false },
                { "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", JSONRPC_INVALID_REQUEST, false },
                { "42", JSONRPC_INVALID_REQUEST, false },
                { "{\"id\":1,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":3}", JSONRPC_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":[1]}", JSONRPC_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":2}", JSONRPC_INVALID_REQUEST, true },
        };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                JsonRpcMessage m = {};
                json_object *id = NULL;
                const char *error = NULL;

                cr_assert_eq(parse(cases[i].line, &m, &id, &error), cases[i].code, "%s", cases[i].line);
                cr_assert_not_null(error);
                cr_assert_eq(id != NULL, cases[i].id_kept, "%s", cases[i].line);
                json_object_put(id);
        }
}

Test(jsonrpc, answers) {
        json_object *id = json_object_new_string("a\"b");
        char *s;

        s = jsonrpc_result(id, json_object_new_object());
        cr_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{}}\n");
        free(s);
        s = jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "bad");
        cr_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad\"}}\n");
        free(s);
        s = jsonrpc_notification("notifications/progress", json_object_new_object());
        cr_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n");
        free(s);
        json_object_put(id);
}
