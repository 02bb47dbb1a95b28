/* SPDX-License-Identifier: MIT */
/* The nine tools as a model reads them. Descriptions say when to use a
 * tool and how its numbers behave, since that is all a model has. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "mcp-args.h"
#include "mcp-schema.h"

#define B(a) MCP_ARG_BIT(MCP_ARG_##a)

#define ID_PROP "\"id\":{\"type\":\"string\",\"description\":\"The job id that run returned.\"}"
#define OUTPUT_PROPS                                                                                    \
        "\"output\":{\"type\":\"string\",\"description\":\"Combined stdout and stderr, cut to the output limit\"}," \
        "\"next_offset\":{\"type\":\"integer\",\"description\":\"Pass as offset to output to read on\"},"   \
        "\"status\":{\"type\":\"string\",\"enum\":[\"queued\",\"running\",\"exited\",\"killed\",\"timed_out\",\"failed\"]}"
#define RUN_RESULT                                                                                      \
        "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}," OUTPUT_PROPS ","              \
        "\"exit_code\":{\"type\":\"integer\",\"description\":\"-1 while running or when a signal ended it\"}," \
        "\"signal\":{\"type\":\"integer\"},\"timed_out\":{\"type\":\"boolean\"},"                          \
        "\"output_truncated\":{\"type\":\"boolean\",\"description\":\"Bytes were left out of output (see its marker line)\"}," \
        "\"contained\":{\"type\":\"boolean\"},\"mechanism\":{\"type\":\"string\"},"                       \
        "\"request_id\":{\"type\":\"string\",\"description\":\"What this run was launched with: a run with it answers this job\"}," \
        "\"sandbox\":{\"type\":\"string\",\"description\":\"The sandbox profile the job runs in: off, workspace, read-only or custom\"}," \
        "\"network_denied\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"},"             \
        "\"description\":\"Host names the sandbox's proxy refused, with counts: ask the user to allow them (--allow-domain), "  \
        "do not retry without the sandbox\"}}," \
        "\"required\":[\"id\",\"status\",\"exit_code\",\"signal\",\"timed_out\",\"output\",\"output_truncated\"," \
        "\"next_offset\",\"contained\",\"mechanism\"]}"

const char mcp_instructions[] =
        "bgrun runs commands as contained background jobs on this machine and keeps their output.\n"
        "Use run for any command that may take long (builds, tests, servers): it answers after wait_sec "
        "(default 10) with the output so far, and the job keeps running. Then use output to read more "
        "(offset = next_offset), wait to wait for the end, write_input for jobs started with stdin, and "
        "stop (graceful) or kill (at once) to end a job. status and list show jobs; forget removes an "
        "ended job's record. Jobs of this server are stopped when it exits.";

const McpToolInfo mcp_tools[_MCP_TOOL_MAX] = {
        [MCP_TOOL_RUN] = {
                .name = "run",
                .title = "Run a command as a background job",
                .description =
                        "Start a command as a background job and wait up to wait_sec seconds (default 10) for it "
                        "to end. The answer has the job id, its status and its output so far; if the job is "
                        "still running when wait_sec passes, it keeps running: read more with output, wait for "
                        "its end with wait, end it with stop or kill. Use wait_sec 0 for servers and other "
                        "commands that do not end. Give exactly one of command (a shell command line, run by "
                        "/bin/sh -c) or argv (the words of one program, run exactly). Output longer than the "
                        "limit shows its beginning and end with a marker line naming the offset to read the "
                        "middle from with output.",
                .input_schema =
                        "{\"type\":\"object\",\"properties\":{"
                        "\"command\":{\"type\":\"string\",\"description\":\"A shell command line, as 'make -j4 && make test'\"},"
                        "\"cwd\":{\"type\":\"string\",\"description\":\"Working directory (default: the server's)\"},"
                        "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
                        "\"description\":\"Environment variables to set or override\"},"
                        "\"session\":{\"type\":\"string\",\"description\":\"Session to file the job under (default: this server's)\"},"
                        "\"stdin\":{\"type\":\"boolean\",\"description\":\"Keep the job's input open for write_input\"},"
                        "\"wait_sec\":{\"type\":\"number\",\"minimum\":0,\"default\":10,"
                        "\"description\":\"Seconds to wait for the end before answering with the output so far; 0: answer at once\"},"
                        "\"request_id\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9._:@-]{1,128}$\","
                        "\"description\":\"Launch at most once: a run with the request_id of an earlier run answers "
                        "that run's job and starts nothing (default: a new id, in the result)\"},"
                        "\"sandbox\":{\"type\":\"string\",\"enum\":[\"off\",\"workspace\",\"read-only\"],"
                        "\"description\":\"Confine the job: workspace (only the workspace writable, not its git hooks "
                        "or config; no network), read-only (nothing writable). Never looser than the server's own sandbox\"},"
                        "\"network\":{\"type\":\"boolean\",\"description\":\"With a sandbox: keep the network "
                        "(only where the server allows it); false takes it away\"}"
                        /* The arguments that give a Launch option: their rows'. */
                        MCP_LAUNCH_ARG_PROPERTIES
                        "},\"additionalProperties\":false}",
                .output_schema = RUN_RESULT,
                .allowed = B(COMMAND) | B(ARGV) | B(CWD) | B(ENV) | B(SESSION) | B(TIMEOUT_SEC) | B(STDIN) | B(TTY) |
                        B(WAIT_SEC) | B(REQUEST_ID) | B(SANDBOX) | B(NETWORK) | B(QUEUE) | B(PARALLEL),
        },
        [MCP_TOOL_OUTPUT] = {
                .name = "output",
                .title = "Read a job's output",
                .description =
                        "Read a job's output (stdout and stderr together) from offset; without offset, from where "
                        "the last run, output, wait or write_input of this job stopped. wait_sec N waits up to N "
                        "seconds for new output or the job's end (default 0: answer at once). complete is true "
                        "once the job ended and everything was read. To read the middle of a long output that "
                        "was left out, pass the offset its marker line names.",
                .input_schema =
                        "{\"type\":\"object\",\"properties\":{" ID_PROP ","
                        "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Byte offset to read from\"},"
                        "\"wait_sec\":{\"type\":\"number\",\"minimum\":0,\"default\":0,"
                        "\"description\":\"Seconds to wait for new output or the job's end; 0: answer at once\"},"
                        "\"max_bytes\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Read at most this many bytes\"}"
                        "},\"required\":[\"id\"],\"additionalProperties\":false}",
                .output_schema =
                        "{\"type\":\"object\",\"properties\":{" OUTPUT_PROPS ",\"complete\":{\"type\":\"boolean\"}},"
                        "\"required\":[\"output\",\"next_offset\",\"complete\",\"status\"]}",
                .read_only = true,
                .idempotent = true,
                .allowed = B(ID) | B(OFFSET) | B(WAIT_SEC) | B(MAX_BYTES),
                .required = B(ID),
        },
        [MCP_TOOL_WRITE_INPUT] = {
                .name = "write_input",
                .title = "Write to a job's input",
                .description =
                        "Write text to the standard input of a job started with stdin or tty (add a newline "
                        "yourself where the program reads lines); eof true closes the input. Then waits wait_sec "
                        "seconds (default 1) and answers with the output that followed.",
                .input_schema =
                        "{\"type\":\"object\",\"properties\":{" ID_PROP ","
                        "\"text\":{\"type\":\"string\",\"description\":\"What to write, as is (add the newline a line needs)\"},"
                        "\"eof\":{\"type\":\"boolean\",\"description\":\"Close the input after text\"},"
                        "\"wait_sec\":{\"type\":\"number\",\"minimum\":0,\"default\":1,"
                        "\"description\":\"Seconds to wait afterwards for the output that follows\"}"
                        "},\"required\":[\"id\"],\"additionalProperties\":false}",
                .output_schema =
                        "{\"type\":\"object\",\"properties\":{" OUTPUT_PROPS "},"
                        "\"required\":[\"output\",\"next_offset\",\"status\"]}",
                .allowed = B(ID) | B(TEXT) | B(EOF) | B(WAIT_SEC),
                .required = B(ID),
        },
        [MCP_TOOL_WAIT] = {
                .name = "wait",
                .title = "Wait for a job to end",
                .description =
                        "Wait up to timeout_sec seconds (default 60) for a job to end, then answer as run does: "
                        "its status, exit code and the output since the last read. If it is still running when "
                        "the time passes, status says running and the job goes on.",
                .input_schema =
                        "{\"type\":\"object\",\"properties\":{" ID_PROP ","
                        "\"timeout_sec\":{\"type\":\"number\",\"minimum\":0,\"default\":60,"
                        "\"description\":\"Seconds to wait for the end; the job goes on if it has not ended\"}"
                        "},\"required\":[\"id\"],\"additionalProperties\":false}",
                .output_schema = RUN_RESULT,
                .read_only = true,
                .allowed = B(ID) | B(TIMEOUT_SEC),
                .required = B(ID),
        },
        [MCP_TOOL_STOP] = {
                .name = "stop",
                .title = "Stop a job gracefully",
                .description =
                        "End a job gracefully: its stop signal (SIGTERM unless given) to all its processes, up "
                        "to grace_sec seconds (default the job's, 5) to exit, then kill. Use for servers and "
                        "anything that should clean up.",
                .input_schema =
                        "{\"type\":\"object\",\"properties\":{" ID_PROP ","
                        "\"grace_sec\":{\"type\":\"number\",\"minimum\":0,"
                        "\"description\":\"Seconds it may take to exit before it is killed (default the job's own)\"},"
                        "\"signal\":{\"type\":[\"string\",\"integer\"],\"description\":\"As TERM, SIGINT or 2\"}"
                        "},\"required\":[\"id\"],\"additionalProperties\":false}",
                .output_schema =
                        "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\"},\"dead\":{\"type\":\"boolean\"},"
                        "\"method\":{\"type\":\"string\"},\"exit_code\":{\"type\":\"integer\"},\"signal\":{\"type\":\"integer\"}},"
                        "\"required\":[\"status\",\"dead\",\"method\",\"exit_code\",\"signal\"]}",
                .destructive = true,
                .idempotent = true,
                .allowed = B(ID) | B(GRACE_SEC) | B(SIGNAL),
                .required = B(ID),
        },
        [MCP_TOOL_KILL] = {
                .name = "kill",
                .title = "Kill a job at once",
                .description =
                        "End a job at once with everything it started, and confirm nothing of it is left. "
                        "Prefer stop unless the job does not react to it.",
                .input_schema = "{\"type\":\"object\",\"properties\":{" ID_PROP "},\"required\":[\"id\"],"
                                "\"additionalProperties\":false}",
                .output_schema =
                        "{\"type\":\"object\",\"properties\":{\"dead\":{\"type\":\"boolean\"},\"method\":{\"type\":\"string\"},"
                        "\"confirmed_at\":{\"type\":\"integer\"}},\"required\":[\"dead\",\"method\",\"confirmed_at\"]}",
                .destructive = true,
                .idempotent = true,
                .allowed = B(ID),
                .required = B(ID),
        },
        [MCP_TOOL_STATUS] = {
                .name = "status",
                .title = "A job's record",
                .description = "The job's record: status, exit_code, signal, times, output_bytes, containment.",
                .input_schema = "{\"type\":\"object\",\"properties\":{" ID_PROP "},\"required\":[\"id\"],"
                                "\"additionalProperties\":false}",
                .output_schema =
                        "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},"
                        "\"exit_code\":{\"type\":\"integer\"},\"output_bytes\":{\"type\":\"integer\"}},"
                        "\"required\":[\"id\",\"status\"]}",
                .read_only = true,
                .idempotent = true,
                .allowed = B(ID),
                .required = B(ID),
        },
        [MCP_TOOL_LIST] = {
                .name = "list",
                .title = "List jobs",
                .description =
                        "List jobs: id, session, status and command (cut). By default this server's session; "
                        "session \"*\" lists all of the user's jobs.",
                .input_schema = "{\"type\":\"object\",\"properties\":{\"session\":{\"type\":\"string\","
                                "\"description\":\"The session to list (default this server's; \\\"*\\\": all of the user's)\"}},"
                                "\"additionalProperties\":false}",
                .output_schema =
                        "{\"type\":\"object\",\"properties\":{\"jobs\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                        "\"properties\":{\"id\":{\"type\":\"string\"},\"session\":{\"type\":\"string\"},"
                        "\"status\":{\"type\":\"string\"},\"command\":{\"type\":\"string\"}},"
                        "\"required\":[\"id\",\"session\",\"status\",\"command\"]}}},\"required\":[\"jobs\"]}",
                .read_only = true,
                .idempotent = true,
                .allowed = B(SESSION),
        },
        [MCP_TOOL_FORGET] = {
                .name = "forget",
                .title = "Forget an ended job",
                .description = "Remove an ended job's record and output. A running job must be stopped first.",
                .input_schema = "{\"type\":\"object\",\"properties\":{" ID_PROP "},\"required\":[\"id\"],"
                                "\"additionalProperties\":false}",
                .output_schema = "{\"type\":\"object\",\"properties\":{}}",
                .destructive = true,
                .idempotent = true,
                .allowed = B(ID),
                .required = B(ID),
        },
};

int mcp_tool_lookup(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(mcp_tools); i++)
                if (streq(mcp_tools[i].name, name))
                        return (int) i;
        return -ENOENT;
}

static int tool_json(const McpToolInfo *t, bool output_schemas, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object(), *a = json_object_new_object();
        json_object *in = json_tokener_parse(t->input_schema);
        int r;

        if (!o || !a || !in) {
                json_object_put(in);
                return -ENOMEM;
        }
        r = json_add_str(o, "name", t->name);
        if (r >= 0)
                r = json_add_str(o, "title", t->title);
        if (r >= 0)
                r = json_add_str(o, "description", t->description);
        if (r >= 0)
                r = json_add(o, "inputSchema", in);
        else
                json_object_put(in);
        if (r >= 0 && output_schemas)
                r = json_add(o, "outputSchema", json_tokener_parse(t->output_schema));
        if (r >= 0)
                r = json_add_str(a, "title", t->title);
        if (r >= 0)
                r = json_add_bool(a, "readOnlyHint", t->read_only);
        if (r >= 0 && !t->read_only)
                r = json_add_bool(a, "destructiveHint", t->destructive);
        if (r >= 0)
                r = json_add_bool(a, "idempotentHint", t->idempotent);
        if (r >= 0)
                r = json_add_bool(a, "openWorldHint", false);
        if (r >= 0)
                r = json_add(o, "annotations", TAKE_PTR(a));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

int mcp_tools_list(bool output_schemas, const char *run_sandbox, json_object **ret) {
        _cleanup_json_ json_object *result = json_object_new_object(), *tools = json_object_new_array();
        int r;

        if (!result || !tools)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(mcp_tools); i++) {
                json_object *t;

                r = tool_json(&mcp_tools[i], output_schemas, &t);
                if (r < 0)
                        return r;
                /* run's description says the sandbox as it is. */
                _cleanup_free_ char *d = NULL;
                if (i == MCP_TOOL_RUN && run_sandbox &&
                    (asprintf(&d, "%s %s", mcp_tools[i].description, run_sandbox) < 0 ||
                     json_object_object_add(t, "description", json_object_new_string(d)) < 0)) {
                        json_object_put(t);
                        return -ENOMEM;
                }
                if (json_object_array_add(tools, t) < 0) {
                        json_object_put(t);
                        return -ENOMEM;
                }
        }
        r = json_add(result, "tools", TAKE_PTR(tools));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(result);
        return 0;
}
