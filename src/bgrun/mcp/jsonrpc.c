/* SPDX-License-Identifier: MIT */
/* MCP's stdio transport: lines in, messages classified; answers out. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "jsonrpc.h"
#include "macro.h"

void line_reader_init(LineReader *r, size_t max) {
        *r = (LineReader) { .max = max ?: JSONRPC_LINE_MAX };
}

void line_reader_done(LineReader *r) {
        free(r->buf);
        *r = (LineReader) {};
}

static int buffer_append(LineReader *r, const char *data, size_t n) {
        if (n == 0)
                return 0; /* an empty line: there may be no buffer yet */
        if (r->len + n > r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 4096;
                char *b;

                while (cap < r->len + n)
                        cap *= 2;
                cap = MIN(cap, r->max);
                b = realloc(r->buf, cap);
                if (!b)
                        return -ENOMEM;
                r->buf = b;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        return 0;
}

static int emit(LineReader *r, LineHandler handler, void *userdata) {
        size_t len = r->len;

        r->len = 0;
        if (len > 0 && r->buf[len - 1] == '\r')
                len--;
        return handler(r->buf ?: "", len, userdata);
}

int line_reader_feed(LineReader *r, const char *data, size_t n, LineHandler handler, void *userdata) {
        while (n > 0) {
                const char *nl = memchr(data, '\n', n);
                size_t chunk = nl ? (size_t) (nl - data) : n;
                int k;

                if (r->discarding) {
                        /* The rest of a line that was too long: dropped as it streams. */
                        if (nl)
                                r->discarding = false;
                } else if (r->len + chunk > r->max) {
                        /* One byte of newline may still fit past max: a '\r'. */
                        r->len = 0;
                        if (r->cap > 65536) {
                                /* Give the memory of the long line back. */
                                free(r->buf);
                                r->buf = NULL;
                                r->cap = 0;
                        }
                        r->discarding = !nl;
                        k = handler(NULL, 0, userdata);
                        if (k < 0)
                                return k;
                } else {
                        k = buffer_append(r, data, chunk);
                        if (k < 0)
                                return k;
                        if (nl) {
                                k = emit(r, handler, userdata);
                                if (k < 0)
                                        return k;
                        }
                }
                if (!nl)
                        break;
                n -= chunk + 1;
                data = nl + 1;
        }
        return 0;
}

int line_reader_finish(LineReader *r, LineHandler handler, void *userdata) {
        if (r->discarding) {
                r->discarding = false;
                return 0; /* said already */
        }
        if (r->len == 0)
                return 0;
        return emit(r, handler, userdata);
}

void jsonrpc_message_done(JsonRpcMessage *m) {
        json_object_put(m->root);
        *m = (JsonRpcMessage) {};
}

bool jsonrpc_line_is_blank(const char *line, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (!strchr(" \t\r", line[i]))
                        return false;
        return true;
}

static json_object *parse_strict(const char *line, size_t len) {
        json_tokener *tok;
        json_object *o;

        if (len > INT32_MAX || memchr(line, '\0', len))
                return NULL;
        tok = json_tokener_new();
        if (!tok)
                return NULL;
        /* Text that is not UTF-8 is not JSON (RFC 8259). */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, line, (int) len);
        if (!o && json_tokener_get_error(tok) == json_tokener_continue) {
                /* A number at the very end may go on: the NUL ends it. The
                 * whole line was taken then. */
                o = json_tokener_parse_ex(tok, "", 1);
                if (o && json_tokener_get_error(tok) == json_tokener_success) {
                        json_tokener_free(tok);
                        return o;
                }
        }
        if (o && json_tokener_get_error(tok) == json_tokener_success) {
                /* Nothing but blanks may follow the value. */
                size_t end = json_tokener_get_parse_end(tok);
                if (!jsonrpc_line_is_blank(line + end, len - end)) {
                        json_object_put(o);
                        o = NULL;
                }
        } else {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(tok);
        return o;
}

static bool id_is_valid(json_object *id) {
        /* MCP: a string or an integer, never null. */
        return id && (json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int));
}

int jsonrpc_parse(const char *line, size_t len, JsonRpcMessage *ret, json_object **ret_id, const char **ret_error) {
        _cleanup_json_ json_object *root = NULL;
        json_object *version, *method, *id = NULL, *params = NULL;
        bool has_id;

        *ret_id = NULL;
        root = parse_strict(line, len);
        if (!root) {
                *ret_error = "Parse error: the line is not one JSON value (UTF-8, strict syntax)";
                return JSONRPC_PARSE_ERROR;
        }
        if (!json_object_is_type(root, json_type_object)) {
                *ret_error = json_object_is_type(root, json_type_array)
                                     ? "Invalid Request: batches (arrays) are not part of this MCP transport"
                                     : "Invalid Request: a message is a JSON object";
                return JSONRPC_INVALID_REQUEST;
        }

        has_id = json_object_object_get_ex(root, "id", &id);
        if (has_id && id_is_valid(id))
                *ret_id = json_object_get(id);

        if (!json_object_object_get_ex(root, "jsonrpc", &version) || !json_object_is_type(version, json_type_string) ||
            !streq(json_object_get_string(version), "2.0")) {
                *ret_error = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
                return JSONRPC_INVALID_REQUEST;
        }
        if (has_id && !id_is_valid(id)) {
                *ret_error = "Invalid Request: \"id\" must be a string or an integer";
                return JSONRPC_INVALID_REQUEST;
        }

        if (!json_object_object_get_ex(root, "method", &method)) {
                if (has_id && (json_object_object_get_ex(root, "result", NULL) ||
                               json_object_object_get_ex(root, "error", NULL))) {
                        *ret = (JsonRpcMessage) { .kind = JSONRPC_RESPONSE, .id = id, .root = TAKE_PTR(root) };
                        json_object_put(*ret_id);
                        *ret_id = NULL;
                        return 0;
                }
                *ret_error = "Invalid Request: no \"method\"";
                return JSONRPC_INVALID_REQUEST;
        }
        if (!json_object_is_type(method, json_type_string)) {
                *ret_error = "Invalid Request: \"method\" must be a string";
                return JSONRPC_INVALID_REQUEST;
        }
        if (json_object_object_get_ex(root, "params", &params) && !json_object_is_type(params, json_type_object)) {
                *ret_error = "Invalid Request: \"params\" must be an object";
                return JSONRPC_INVALID_REQUEST;
        }

        *ret = (JsonRpcMessage) {
                .kind = has_id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION,
                .id = id,
                .method = json_object_get_string(method),
                .params = params,
        };
        ret->root = TAKE_PTR(root);
        json_object_put(*ret_id);
        *ret_id = NULL;
        return 0;
}

static char *finish(json_object *o) {
        const char *s;
        char *text;

        if (!o)
                return NULL;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        text = s && asprintf(&text, "%s\n", s) >= 0 ? text : NULL;
        json_object_put(o);
        return text;
}

static json_object *envelope(json_object *id) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        /* No id (a line that could not be read): null. */
        if (json_add_str(o, "jsonrpc", "2.0") < 0 || json_object_object_add(o, "id", json_object_get(id)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

char *jsonrpc_result(json_object *id, json_object *result) {
        json_object *o = envelope(id);

        if (!o) {
                json_object_put(result);
                return NULL;
        }
        if (json_add(o, "result", result) < 0) { /* result put by json_add() */
                json_object_put(o);
                return NULL;
        }
        return finish(o);
}

char *jsonrpc_error(json_object *id, int code, const char *message) {
        _cleanup_json_ json_object *e = json_object_new_object();
        json_object *o = envelope(id);

        if (!o || !e || json_add_i64(e, "code", code) < 0 || json_add_str(e, "message", message) < 0 ||
            json_add(o, "error", TAKE_PTR(e)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return finish(o);
}

char *jsonrpc_notification(const char *method, json_object *params) {
        json_object *o = json_object_new_object();

        if (!o || json_add_str(o, "jsonrpc", "2.0") < 0 || json_add_str(o, "method", method) < 0) {
                json_object_put(o);
                json_object_put(params);
                return NULL;
        }
        if (json_add(o, "params", params) < 0) {
                json_object_put(o);
                return NULL;
        }
        return finish(o);
}
