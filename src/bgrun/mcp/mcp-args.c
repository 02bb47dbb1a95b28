/* SPDX-License-Identifier: MIT */
/* Typed readers of the tools' arguments. */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "launch-options.h"
#include "macro.h"
#include "mcp-args.h"
#include "parse-util.h"
#include "sandbox-profile.h"

typedef enum ArgType {
        TYPE_STRING,
        TYPE_STRV,
        TYPE_ENV,
        TYPE_BOOL,
        TYPE_SECONDS,
        TYPE_UINT,
        TYPE_SIGNAL,
} ArgType;

static const struct {
        const char *name;
        ArgType type;
} args_table[_MCP_ARG_MAX] = {
        [MCP_ARG_ID] = { "id", TYPE_STRING },
        [MCP_ARG_COMMAND] = { "command", TYPE_STRING },
        [MCP_ARG_ARGV] = { "argv", TYPE_STRV },
        [MCP_ARG_CWD] = { "cwd", TYPE_STRING },
        [MCP_ARG_ENV] = { "env", TYPE_ENV },
        [MCP_ARG_SESSION] = { "session", TYPE_STRING },
        [MCP_ARG_TIMEOUT_SEC] = { "timeout_sec", TYPE_SECONDS },
        [MCP_ARG_STDIN] = { "stdin", TYPE_BOOL },
        [MCP_ARG_TTY] = { "tty", TYPE_BOOL },
        [MCP_ARG_WAIT_SEC] = { "wait_sec", TYPE_SECONDS },
        [MCP_ARG_OFFSET] = { "offset", TYPE_UINT },
        [MCP_ARG_MAX_BYTES] = { "max_bytes", TYPE_UINT },
        [MCP_ARG_TEXT] = { "text", TYPE_STRING },
        [MCP_ARG_EOF] = { "eof", TYPE_BOOL },
        [MCP_ARG_GRACE_SEC] = { "grace_sec", TYPE_SECONDS },
        [MCP_ARG_SIGNAL] = { "signal", TYPE_SIGNAL },
        [MCP_ARG_REQUEST_ID] = { "request_id", TYPE_STRING },
        [MCP_ARG_SANDBOX] = { "sandbox", TYPE_STRING },
        [MCP_ARG_NETWORK] = { "network", TYPE_BOOL },
        [MCP_ARG_QUEUE] = { "queue", TYPE_BOOL },
        [MCP_ARG_PARALLEL] = { "parallel", TYPE_UINT },
};

const char *mcp_arg_name(McpArg a) {
        return a >= 0 && a < _MCP_ARG_MAX ? args_table[a].name : NULL;
}

void mcp_args_done(McpArgs *a) {
        free(a->argv);
        *a = (McpArgs) {};
}

_printf_(2, 3) static int fail(char **ret_error, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return -EINVAL;
}

/* A JSON string without NUL, which no C string can carry. */
static const char *string_of(json_object *v) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return NULL;
        s = json_object_get_string(v);
        return strlen(s) == (size_t) json_object_get_string_len(v) ? s : NULL;
}

static int read_strv(json_object *v, const char *name, McpArgs *a, char **ret_error) {
        size_t n;

        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
                return fail(ret_error, "Argument '%s' must be a non-empty array of strings.", name);
        n = json_object_array_length(v);
        a->argv = calloc(n + 1, sizeof(char *));
        if (!a->argv)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                a->argv[i] = string_of(json_object_array_get_idx(v, i));
                if (!a->argv[i])
                        return fail(ret_error, "Argument '%s' must be an array of strings (element %zu is not).",
                                    name, i);
        }
        return 0;
}

static int read_env(json_object *v, const char *name, McpArgs *a, char **ret_error) {
        if (!json_object_is_type(v, json_type_object))
                return fail(ret_error, "Argument '%s' must be an object of strings, as {\"NAME\": \"value\"}.", name);
        json_object_object_foreach(v, key, value) {
                if (!key[0] || strchr(key, '='))
                        return fail(ret_error, "Argument '%s': '%s' is not a variable name.", name, key);
                if (!string_of(value))
                        return fail(ret_error, "Argument '%s': the value of '%s' must be a string.", name, key);
        }
        a->env = v;
        return 0;
}

static int read_seconds(json_object *v, const char *name, uint64_t *ret, char **ret_error) {
        double d;

        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                return fail(ret_error, "Argument '%s' must be a number of seconds.", name);
        d = json_object_get_double(v);
        if (!isfinite(d) || d < 0 || d > MCP_SECONDS_MAX)
                return fail(ret_error, "Argument '%s' must be between 0 and %.0f seconds.", name, MCP_SECONDS_MAX);
        *ret = (uint64_t) (d * 1e6 + 0.5);
        return 0;
}

static int read_uint(json_object *v, const char *name, uint64_t *ret, char **ret_error) {
        int64_t i;

        if (!json_object_is_type(v, json_type_int))
                return fail(ret_error, "Argument '%s' must be a whole number.", name);
        i = json_object_get_int64(v);
        if (i < 0)
                return fail(ret_error, "Argument '%s' must not be negative.", name);
        *ret = (uint64_t) i;
        return 0;
}

static int read_signal(json_object *v, const char *name, int *ret, char **ret_error) {
        char buf[32];
        const char *s = NULL;
        int sig;

        if (json_object_is_type(v, json_type_int)) {
                int64_t i = json_object_get_int64(v);
                snprintf(buf, sizeof buf, "%lld", (long long) (i < 0 ? -1 : MIN(i, (int64_t) 100000)));
                s = buf;
        } else
                s = string_of(v);
        if (!s)
                return fail(ret_error, "Argument '%s' must be a signal name (\"TERM\", \"SIGINT\") or number.", name);
        sig = parse_signal(s);
        if (sig < 0)
                return fail(ret_error, "Argument '%s': '%s' is not a signal (a name as TERM or SIGINT, or a number).",
                            name, s);
        *ret = sig;
        return 0;
}

static int read_one(McpArg arg, json_object *v, McpArgs *a, char **ret_error) {
        const char *name = args_table[arg].name;
        const char *s;

        switch (args_table[arg].type) {
        case TYPE_STRING:
                s = string_of(v);
                if (!s)
                        return fail(ret_error, "Argument '%s' must be a string.", name);
                *(arg == MCP_ARG_ID        ? &a->id
                  : arg == MCP_ARG_COMMAND ? &a->command
                  : arg == MCP_ARG_CWD     ? &a->cwd
                  : arg == MCP_ARG_SESSION ? &a->session
                  : arg == MCP_ARG_REQUEST_ID ? &a->request_id
                  : arg == MCP_ARG_SANDBOX ? &a->sandbox_name
                                           : &a->text) = s;
                if (arg == MCP_ARG_REQUEST_ID && !launch_request_id_is_valid(s))
                        return fail(ret_error, "Argument '%s' must be 1 to 128 letters, digits and ._:@-.", name);
                if (arg == MCP_ARG_SANDBOX && (a->sandbox = sandbox_profile_from_string(s)) < 0)
                        return fail(ret_error, "Argument '%s' must be \"off\", \"workspace\" or \"read-only\".", name);
                return 0;
        case TYPE_STRV:
                return read_strv(v, name, a, ret_error);
        case TYPE_ENV:
                return read_env(v, name, a, ret_error);
        case TYPE_BOOL:
                if (!json_object_is_type(v, json_type_boolean))
                        return fail(ret_error, "Argument '%s' must be true or false.", name);
                *(arg == MCP_ARG_STDIN ? &a->stdin_pipe : arg == MCP_ARG_TTY ? &a->tty
                  : arg == MCP_ARG_NETWORK ? &a->network : arg == MCP_ARG_QUEUE ? &a->queue : &a->eof) =
                        json_object_get_boolean(v);
                return 0;
        case TYPE_SECONDS:
                return read_seconds(v, name,
                                    arg == MCP_ARG_TIMEOUT_SEC ? &a->timeout_usec
                                    : arg == MCP_ARG_WAIT_SEC  ? &a->wait_usec
                                                               : &a->grace_usec,
                                    ret_error);
        case TYPE_UINT:
                if (arg == MCP_ARG_PARALLEL) {
                        int r = read_uint(v, name, &a->parallel, ret_error);
                        if (r >= 0 && (a->parallel < 1 || a->parallel > UINT32_MAX))
                                return fail(ret_error, "Argument '%s' must be a whole number of at least 1.", name);
                        return r;
                }
                return read_uint(v, name, arg == MCP_ARG_OFFSET ? &a->offset : &a->max_bytes, ret_error);
        case TYPE_SIGNAL:
                return read_signal(v, name, &a->signal, ret_error);
        }
        return -EINVAL;
}

static int list_allowed(const char *tool, unsigned allowed, const char *unknown, char **ret_error) {
        char names[512] = "";
        size_t n = 0;

        for (McpArg a = 0; a < _MCP_ARG_MAX; a++)
                if (allowed & MCP_ARG_BIT(a))
                        n += snprintf(names + MIN(n, sizeof names), n < sizeof names ? sizeof names - n : 0, "%s%s",
                                      n ? ", " : "", args_table[a].name);
        return fail(ret_error, "Unknown argument '%s' for tool '%s' (it takes: %s).", unknown, tool,
                    n ? names : "no arguments");
}

int mcp_args_read(json_object *arguments, const char *tool, unsigned allowed, unsigned required, McpArgs *ret,
                  char **ret_error) {
        McpArgs a = {};
        int r;

        *ret_error = NULL;
        if (arguments && !json_object_is_type(arguments, json_type_object))
                return fail(ret_error, "The arguments of tool '%s' must be an object.", tool);

        if (arguments) {
                json_object_object_foreach(arguments, key, value) {
                        McpArg arg = _MCP_ARG_MAX;

                        for (McpArg i = 0; i < _MCP_ARG_MAX; i++)
                                if (streq(args_table[i].name, key))
                                        arg = i;
                        if (arg == _MCP_ARG_MAX || !(allowed & MCP_ARG_BIT(arg))) {
                                mcp_args_done(&a);
                                return list_allowed(tool, allowed, key, ret_error);
                        }
                        /* null for an optional argument: as if not given. */
                        if (!value && !(required & MCP_ARG_BIT(arg)))
                                continue;
                        r = read_one(arg, value, &a, ret_error);
                        if (r < 0) {
                                mcp_args_done(&a);
                                return r;
                        }
                        a.seen |= MCP_ARG_BIT(arg);
                }
        }

        for (McpArg i = 0; i < _MCP_ARG_MAX; i++)
                if ((required & MCP_ARG_BIT(i)) && !(a.seen & MCP_ARG_BIT(i))) {
                        mcp_args_done(&a);
                        return fail(ret_error, "Missing argument '%s' for tool '%s'.", args_table[i].name, tool);
                }

        *ret = a;
        return 0;
}
