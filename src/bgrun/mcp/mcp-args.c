/* SPDX-License-Identifier: MIT */
/* Typed readers of the tools' arguments. */

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "launch-builder.h"
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
        size_t offset;     /* of its field in McpArgs */
        int option;        /* the LaunchOption it gives; -1: none */
} args_table[_MCP_ARG_MAX] = {
#define LAUNCH_ROW(e, name_, type_, field, option_, schema)                                                     \
        [MCP_ARG_##e] = { name_, TYPE_##type_, offsetof(McpArgs, field), LAUNCH_OPTION_##option_ },
#define ROW(e, name_, type_, field) [MCP_ARG_##e] = { name_, TYPE_##type_, offsetof(McpArgs, field), -1 },
        MCP_LAUNCH_ARG_TABLE(LAUNCH_ROW)
        MCP_ARG_TABLE(ROW)
#undef LAUNCH_ROW
#undef ROW
};

/* The field of argument arg in a. */
#define FIELD(a, arg, type) ((type *) ((char *) (a) + args_table[arg].offset))

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

static int read_strv(json_object *v, const char *name, const char ***ret, char **ret_error) {
        size_t n;

        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
                return fail(ret_error, "Argument '%s' must be a non-empty array of strings.", name);
        n = json_object_array_length(v);
        free(*ret);
        *ret = calloc(n + 1, sizeof(char *));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                (*ret)[i] = string_of(json_object_array_get_idx(v, i));
                if (!(*ret)[i])
                        return fail(ret_error, "Argument '%s' must be an array of strings (element %zu is not).",
                                    name, i);
        }
        return 0;
}

static int read_env(json_object *v, const char *name, json_object **ret, char **ret_error) {
        if (!json_object_is_type(v, json_type_object))
                return fail(ret_error, "Argument '%s' must be an object of strings, as {\"NAME\": \"value\"}.", name);
        json_object_object_foreach(v, key, value) {
                if (!key[0] || strchr(key, '='))
                        return fail(ret_error, "Argument '%s': '%s' is not a variable name.", name, key);
                if (!string_of(value))
                        return fail(ret_error, "Argument '%s': the value of '%s' must be a string.", name, key);
        }
        *ret = v;
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

/* What only some arguments ask of their value, past their type. */
static int check_one(McpArg arg, McpArgs *a, char **ret_error) {
        const char *name = args_table[arg].name;
        switch (arg) {
        case MCP_ARG_REQUEST_ID:
                if (!launch_request_id_is_valid(a->request_id))
                        return fail(ret_error, "Argument '%s' must be 1 to 128 letters, digits and ._:@-.", name);
                return 0;
        case MCP_ARG_SANDBOX:
                if ((a->sandbox = sandbox_profile_from_string(a->sandbox_name)) < 0)
                        return fail(ret_error, "Argument '%s' must be \"off\", \"workspace\" or \"read-only\".", name);
                return 0;
        case MCP_ARG_PARALLEL:
                if (a->parallel < 1 || a->parallel > UINT32_MAX)
                        return fail(ret_error, "Argument '%s' must be a whole number of at least 1.", name);
                return 0;
        default:
                return 0;
        }
}

static int read_one(McpArg arg, json_object *v, McpArgs *a, char **ret_error) {
        const char *name = args_table[arg].name;
        int r = -EINVAL;

        switch (args_table[arg].type) {
        case TYPE_STRING:
                *FIELD(a, arg, const char *) = string_of(v);
                r = *FIELD(a, arg, const char *) ? 0 : fail(ret_error, "Argument '%s' must be a string.", name);
                break;
        case TYPE_STRV:
                r = read_strv(v, name, FIELD(a, arg, const char **), ret_error);
                break;
        case TYPE_ENV:
                r = read_env(v, name, FIELD(a, arg, json_object *), ret_error);
                break;
        case TYPE_BOOL:
                if (!json_object_is_type(v, json_type_boolean))
                        return fail(ret_error, "Argument '%s' must be true or false.", name);
                *FIELD(a, arg, bool) = json_object_get_boolean(v);
                r = 0;
                break;
        case TYPE_SECONDS:
                r = read_seconds(v, name, FIELD(a, arg, uint64_t), ret_error);
                break;
        case TYPE_UINT:
                r = read_uint(v, name, FIELD(a, arg, uint64_t), ret_error);
                break;
        case TYPE_SIGNAL:
                r = read_signal(v, name, FIELD(a, arg, int), ret_error);
                break;
        }
        return r < 0 ? r : check_one(arg, a, ret_error);
}

void mcp_args_launch_options(const McpArgs *a, LaunchArgs *l) {
        for (McpArg arg = 0; arg < (McpArg) _MCP_LAUNCH_ARG_END; arg++) {
                if (!mcp_args_has(a, arg))
                        continue;
                LaunchOption o = (LaunchOption) args_table[arg].option;
                LaunchValue v = {};
                switch (args_table[arg].type) {
                case TYPE_STRING: v.str = *FIELD(a, arg, const char *); break;
                case TYPE_STRV: v.strv = (char *const *) *FIELD(a, arg, const char **); break;
                case TYPE_BOOL: v.u64 = *FIELD(a, arg, bool); break;
                case TYPE_SECONDS:
                case TYPE_UINT: v.u64 = *FIELD(a, arg, uint64_t); break;
                case TYPE_SIGNAL: v.u64 = (uint64_t) (int64_t) *FIELD(a, arg, int); break;
                case TYPE_ENV: continue; /* none gives one */
                }
                /* 0 of an option whose least is 1 (timeout_sec 0): none. */
                if (launch_options[o].min > 0 && !v.str && !v.strv && v.u64 == 0)
                        continue;
                launch_args_set(l, o, v);
        }
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
