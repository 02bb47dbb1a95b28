/* SPDX-License-Identifier: MIT */
/* The tools' arguments: read by type, and every refusal names the argument.
 * And the schemas a model sees agree with what the readers take. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-args.h"
#include "mcp-schema.h"

/* The arguments' JSON of the test: the strings read stay borrowed from it. */
static json_object *held[8];
static size_t n_held;

static void release(void) {
        for (size_t i = 0; i < n_held; i++)
                json_object_put(held[i]);
        n_held = 0;
}

TestSuite(mcp_args, .fini = release);

static int read_args(const char *json, McpTool tool, McpArgs *a, char **error) {
        json_object *o = json_tokener_parse(json);
        int r;

        cr_assert_not_null(o, "bad test JSON: %s", json);
        r = mcp_args_read(o, mcp_tools[tool].name, mcp_tools[tool].allowed, mcp_tools[tool].required, a, error);
        if (n_held < 8)
                held[n_held++] = o;
        else
                json_object_put(o);
        return r;
}

Test(mcp_args, run) {
        McpArgs a = {};
        char *error = NULL;

        cr_assert_eq(read_args("{\"argv\":[\"echo\",\"hi\"],\"cwd\":\"/tmp\",\"env\":{\"A\":\"1\"},"
                               "\"timeout_sec\":1.5,\"stdin\":true,\"wait_sec\":0}",
                               MCP_TOOL_RUN, &a, &error), 0);
        cr_assert_str_eq(a.argv[0], "echo");
        cr_assert_str_eq(a.argv[1], "hi");
        cr_assert_null(a.argv[2]);
        cr_assert_str_eq(a.cwd, "/tmp");
        cr_assert_eq(a.timeout_usec, 1500000);
        cr_assert(a.stdin_pipe);
        cr_assert(mcp_args_has(&a, MCP_ARG_WAIT_SEC));
        cr_assert_eq(a.wait_usec, 0);
        cr_assert(!mcp_args_has(&a, MCP_ARG_COMMAND));
        mcp_args_done(&a);
}

Test(mcp_args, signal) {
        McpArgs a = {};
        char *error = NULL;

        cr_assert_eq(read_args("{\"id\":\"abc\",\"signal\":\"INT\"}", MCP_TOOL_STOP, &a, &error), 0);
        cr_assert_eq(a.signal, SIGINT);
        cr_assert_eq(read_args("{\"id\":\"abc\",\"signal\":9}", MCP_TOOL_STOP, &a, &error), 0);
        cr_assert_eq(a.signal, SIGKILL);
}

Test(mcp_args, refusals_name_the_argument) {
        static const struct {
                const char *json;
                McpTool tool;
                const char *named;
        } cases[] = {
                { "{\"id\":\"x\",\"bogus\":1}", MCP_TOOL_STATUS, "'bogus'" },
                { "{}", MCP_TOOL_STATUS, "'id'" },
                { "{\"id\":5}", MCP_TOOL_STATUS, "'id'" },
                { "{\"command\":\"a\\u0000b\"}", MCP_TOOL_RUN, "'command'" },
                { "{\"argv\":[]}", MCP_TOOL_RUN, "'argv'" },
                { "{\"argv\":[\"a\",1]}", MCP_TOOL_RUN, "'argv'" },
                { "{\"command\":\"x\",\"env\":{\"A\":1}}", MCP_TOOL_RUN, "'env'" },
                { "{\"command\":\"x\",\"env\":[\"A=1\"]}", MCP_TOOL_RUN, "'env'" },
                { "{\"command\":\"x\",\"wait_sec\":-1}", MCP_TOOL_RUN, "'wait_sec'" },
                { "{\"command\":\"x\",\"wait_sec\":\"5\"}", MCP_TOOL_RUN, "'wait_sec'" },
                { "{\"command\":\"x\",\"timeout_sec\":1e300}", MCP_TOOL_RUN, "'timeout_sec'" },
                { "{\"command\":\"x\",\"tty\":1}", MCP_TOOL_RUN, "'tty'" },
                { "{\"id\":\"x\",\"offset\":-4}", MCP_TOOL_OUTPUT, "'offset'" },
                { "{\"id\":\"x\",\"offset\":1.5}", MCP_TOOL_OUTPUT, "'offset'" },
                { "{\"id\":\"x\",\"signal\":\"NOPE\"}", MCP_TOOL_STOP, "'signal'" },
                { "{\"id\":\"x\",\"signal\":0}", MCP_TOOL_STOP, "'signal'" },
                { "{\"id\":\"x\",\"wait_sec\":1}", MCP_TOOL_KILL, "'wait_sec'" },
        };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                McpArgs a = {};
                char *error = NULL;

                cr_assert_eq(read_args(cases[i].json, cases[i].tool, &a, &error), -EINVAL, "%s", cases[i].json);
                cr_assert_not_null(error);
                cr_assert_not_null(strstr(error, cases[i].named), "%s: %s", cases[i].json, error);
                free(error);
        }
}

Test(mcp_args, not_an_object) {
        McpArgs a = {};
        char *error = NULL;
        json_object *o = json_object_new_array();

        cr_assert_eq(mcp_args_read(o, "run", ~0U, 0, &a, &error), -EINVAL);
        cr_assert_not_null(strstr(error, "object"));
        free(error);
        json_object_put(o);
}

/* Every property an input schema lists is an argument the tool takes, and
 * back; required ones agree; every schema is JSON. */
Test(mcp_schema, agrees_with_readers) {
        for (size_t t = 0; t < _MCP_TOOL_MAX; t++) {
                json_object *in = json_tokener_parse(mcp_tools[t].input_schema), *out, *props, *req;
                unsigned listed = 0, required = 0;

                cr_assert_not_null(in, "%s", mcp_tools[t].name);
                out = json_tokener_parse(mcp_tools[t].output_schema);
                cr_assert_not_null(out, "%s", mcp_tools[t].name);
                cr_assert(json_object_object_get_ex(in, "properties", &props));
                json_object_object_foreach(props, key, value) {
                        int found = -1;
                        for (McpArg a = 0; a < _MCP_ARG_MAX; a++)
                                if (strcmp(mcp_arg_name(a), key) == 0)
                                        found = a;
                        cr_assert_geq(found, 0, "%s: %s", mcp_tools[t].name, key);
                        listed |= MCP_ARG_BIT(found);
                        (void) value;
                }
                cr_assert_eq(listed, mcp_tools[t].allowed, "%s", mcp_tools[t].name);
                if (json_object_object_get_ex(in, "required", &req))
                        for (size_t i = 0; i < json_object_array_length(req); i++)
                                for (McpArg a = 0; a < _MCP_ARG_MAX; a++)
                                        if (strcmp(mcp_arg_name(a),
                                                   json_object_get_string(json_object_array_get_idx(req, i))) == 0)
                                                required |= MCP_ARG_BIT(a);
                cr_assert_eq(required, mcp_tools[t].required, "%s", mcp_tools[t].name);
                json_object_put(in);
                json_object_put(out);
        }
}

/* A model reads an argument's description to know what to pass: every
 * argument of every tool has one (the contract's rule). */
Test(mcp_schema, every_argument_has_a_description) {
        for (size_t t = 0; t < _MCP_TOOL_MAX; t++) {
                json_object *in = json_tokener_parse(mcp_tools[t].input_schema), *props, *d;
                cr_assert_not_null(in, "%s", mcp_tools[t].name);
                cr_assert(json_object_object_get_ex(in, "properties", &props));
                json_object_object_foreach(props, key, value) {
                        cr_assert(json_object_object_get_ex(value, "description", &d) &&
                                          json_object_is_type(d, json_type_string) && json_object_get_string_len(d) > 0,
                                  "%s: argument %s has no description", mcp_tools[t].name, key);
                }
                json_object_put(in);
        }
}

Test(mcp_schema, list) {
        json_object *l = NULL, *tools, *first;

        cr_assert_eq(mcp_tools_list(true, NULL, &l), 0);
        cr_assert(json_object_object_get_ex(l, "tools", &tools));
        cr_assert_eq(json_object_array_length(tools), 9);
        first = json_object_array_get_idx(tools, 0);
        cr_assert(json_object_object_get_ex(first, "outputSchema", NULL));
        json_object_put(l);
        cr_assert_eq(mcp_tools_list(false, NULL, &l), 0);
        json_object_object_get_ex(l, "tools", &tools);
        cr_assert(!json_object_object_get_ex(json_object_array_get_idx(tools, 0), "outputSchema", NULL));
        json_object_put(l);
        cr_assert_eq(mcp_tool_lookup("kill"), MCP_TOOL_KILL);
        cr_assert_lt(mcp_tool_lookup("nope"), 0);
}
