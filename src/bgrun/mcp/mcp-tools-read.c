/* SPDX-License-Identifier: MIT */
/* The tools that start a job or read what it wrote: run, wait, output,
 * write_input. Each answers with the output since where it starts, cut to
 * the output limit. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch-builder.h"
#include "json-util.h"
#include "log.h"
#include "mcp-call.h"
#include "mcp-sandbox.h"
#include "mcp-output.h"
#include "record.h"
#include "run-env.h"
#include "terminal-text.h"
#include "time-util.h"
#include "verbs.h"


static int take_chunk(McpCall *c, sd_bus_message *reply, uint8_t **ret, size_t *ret_n) {
        const void *data;
        size_t n;
        uint64_t next;
        int complete, r;

        r = sd_bus_message_read_array(reply, 'y', &data, &n);
        if (r >= 0)
                r = sd_bus_message_read(reply, "tb", &next, &complete);
        if (r < 0)
                return mcp_call_fail(c, "bgrund's answer to ReadOutput could not be read: %s", strerror(-r));
        free(*ret);
        *ret = malloc(n ?: 1);
        if (!*ret)
                return mcp_call_fail(c, "Out of memory.");
        if (n > 0) /* an empty array's data may be NULL */
                memcpy(*ret, data, n);
        *ret_n = n;
        c->next_offset = next;
        c->complete = complete;
        return 0;
}

static int read_chunk(McpCall *c, uint64_t offset, size_t n, McpStep step) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = mcp_new_call(c, "ReadOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "stu", c->job_id, offset, (uint32_t) n);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the ReadOutput call: %s", strerror(-r));
        return mcp_call_bus(c, TAKE_PTR(m), 0, step);
}

static int on_tail(McpCall *c, sd_bus_message *reply) {
        int r = take_chunk(c, reply, &c->tail, &c->tail_n);
        if (r < 0)
                return r;
        mcp_cursor_set(c->server, c->job_id, c->next_offset);
        return c->after_output(c, NULL);
}

static int on_head(McpCall *c, sd_bus_message *reply) {
        int r = take_chunk(c, reply, &c->head, &c->head_n);
        if (r < 0)
                return r;
        if (c->range_short) {
                /* The next read goes on where this one ends: at a line's end. */
                size_t keep = mcp_output_range_end(c->head, c->head_n);
                c->next_offset -= c->head_n - keep;
                c->head_n = keep;
                c->complete = false;
        }
        if (c->tail_offset > 0 && c->tail_n > 0) {
                size_t want = c->tail_n;
                c->tail_n = 0;
                return read_chunk(c, c->tail_offset, want, on_tail);
        }
        c->tail_n = 0;
        mcp_cursor_set(c->server, c->job_id, c->next_offset);
        return c->after_output(c, NULL);
}

int mcp_read_output(McpCall *c, McpStep after) {
        uint64_t bytes = 0, available, tail_offset;
        size_t head_n, tail_n;

        c->after_output = after;
        (void) dict_get_uint(c->record, &record_keys[RECORD_KEY_OUTPUT_BYTES], &bytes);
        available = bytes > c->offset ? bytes - c->offset : 0;
        available = MIN(available, c->max_bytes);
        if (available == 0 && !record_is_running(c->record)) {
                /* An ended job with nothing past offset: no round trip for nothing. */
                free(c->head);
                c->head = NULL;
                c->head_n = c->tail_n = 0;
                c->next_offset = c->offset > bytes ? c->offset : bytes;
                c->complete = true;
                mcp_cursor_set(c->server, c->job_id, c->next_offset);
                return c->after_output(c, NULL);
        }
        if (c->output_mode) {
                /* One range, whole, within what a result holds. */
                size_t room = c->server->options.output_limit - MCP_OUTPUT_MARKER_MAX;
                uint64_t total = bytes > c->offset ? bytes - c->offset : 0;
                c->range_short = available > room || available < total;
                c->tail_n = 0;
                return read_chunk(c, c->offset, (size_t) MIN(available, room), on_head);
        }
        mcp_output_plan(c->offset, available, c->server->options.output_limit, &head_n, &tail_offset, &tail_n);
        /* on_head() reads the tail, if there is one to read. */
        c->tail_offset = tail_n > 0 ? tail_offset : 0;
        c->tail_n = tail_n;
        return read_chunk(c, c->offset, head_n, on_head);
}

static bool record_is_tty(json_object *rec) {
        const char *stdin_kind = dict_get_string(rec, &record_keys[RECORD_KEY_STDIN]);
        return stdin_kind && streq(stdin_kind, "tty");
}

/* A terminal job's output as bgrun logs --plain gives it: without the
 * control sequences that only made the terminal draw it. Each chunk is
 * filtered on its own: the head and the tail are apart anyway. */
static int plain_text(uint8_t **data, size_t *n) {
        _cleanup_free_ TerminalText *t = malloc(sizeof(TerminalText));
        uint8_t *out;
        size_t k;

        if (!t || *n > SIZE_MAX - TERMINAL_TEXT_OUT_MAX(0) - TERMINAL_TEXT_LINE_MAX)
                return -ENOMEM;
        out = malloc(TERMINAL_TEXT_OUT_MAX(*n) + TERMINAL_TEXT_LINE_MAX);
        if (!out)
                return -ENOMEM;
        terminal_text_init(t);
        k = terminal_text_feed(t, *data, *n, (char *) out);
        k += terminal_text_flush(t, (char *) out + k);
        free(*data);
        *data = out;
        *n = k;
        return 0;
}

int mcp_output_text(McpCall *c, char **ret, size_t *ret_len) {
        bool tty = record_is_tty(c->record) && c->head;
        size_t head_read_n = c->head_n;
        OutputChunks chunks;

        if (tty && (plain_text(&c->head, &c->head_n) < 0 || (c->tail_n > 0 && plain_text(&c->tail, &c->tail_n) < 0)))
                return -ENOMEM;
        chunks = (OutputChunks) {
                .head = c->head ?: (const uint8_t *) "",
                .head_n = c->head_n,
                .head_offset = c->offset,
                .tail = c->tail_n > 0 ? c->tail : NULL,
                .tail_n = c->tail_n,
                .tail_offset = c->tail_offset,
                .filtered = tty,
                .head_read_n = head_read_n,
        };
        return mcp_output_format(&chunks, c->server->options.output_limit, ret, ret_len);
}

/* The first line of a result: which job, how it is, where to read on. */
static void status_line(McpCall *c, bool cut, char *buf, size_t len) {
        char outcome[128];

        if (record_is_running(c->record)) {
                snprintf(buf, len, "Job %s is still running (it goes on; read more with output, offset %llu)%s",
                         c->job_id, (unsigned long long) c->next_offset,
                         cut ? ". Part of the output was left out, see the marker line." : ".");
                return;
        }
        format_outcome(c->record, outcome, sizeof outcome);
        snprintf(buf, len, "Job %s %s.%s", c->job_id, outcome,
                 cut ? " Part of the output was left out, see the marker line." : "");
}

/* The hosts the job's proxy refused, as a line for the model (empty when
 * none): its user decides, not a looser retry. */
static void denied_line(json_object *record, char *buf, size_t len) {
        json_object *denied = dict_get(record, &record_keys[RECORD_KEY_NETWORK_DENIED]);
        buf[0] = '\0';
        if (!denied || !json_object_is_type(denied, json_type_object) || json_object_object_length(denied) == 0)
                return;
        size_t at = (size_t) snprintf(buf, len, "The sandbox refused these hosts (not in its allowed domains):");
        json_object_object_foreach(denied, host, count) {
                if (at >= len)
                        break;
                at += (size_t) snprintf(buf + at, len - at, " %s (%" PRId64 "x)", host, json_object_get_int64(count));
        }
        if (at < len)
                snprintf(buf + at, len - at, ". Ask the user to allow them; do not retry without the sandbox.\n");
}

static int answer_with_output(McpCall *c, json_object *st, bool with_outcome) {
        _cleanup_free_ char *output = NULL, *text = NULL;
        _cleanup_json_ json_object *structured = st;
        const char *status = dict_get_string(c->record, &record_keys[RECORD_KEY_STATUS]);
        bool cut, truncated = false;
        char line[512];
        size_t n;
        int r;

        r = mcp_output_text(c, &output, &n);
        if (r < 0)
                return mcp_call_fail(c, "Out of memory.");
        cut = strstr(output, "\n[bgrun: ") && c->tail_n > 0;
        (void) dict_get_bool(c->record, &record_keys[RECORD_KEY_OUTPUT_TRUNCATED], &truncated);
        status_line(c, cut, line, sizeof line);
        char refused[1024];
        denied_line(c->record, refused, sizeof refused);
        if (asprintf(&text, "%s\n%s%s", line, refused, n > 0 ? output : "(no output)\n") < 0)
                return mcp_call_fail(c, "Out of memory.");

        r = json_object_object_add(structured, "output", json_object_new_string_len(output, (int) n));
        if (r >= 0)
                r = json_add_u64(structured, "next_offset", c->next_offset);
        if (r >= 0)
                r = json_add_str(structured, "status", status ?: "unknown");
        if (r >= 0 && with_outcome) {
                json_object *containment = dict_get(c->record, &record_keys[RECORD_KEY_CONTAINMENT]);
                const char *mechanism = dict_get_string(containment, &containment_keys[CONTAINMENT_KEY_MECHANISM]);
                int64_t exit_code = -1;
                bool contained = false;

                (void) dict_get_int(c->record, &record_keys[RECORD_KEY_EXIT_CODE], &exit_code);
                (void) dict_get_bool(containment, &containment_keys[CONTAINMENT_KEY_CONTAINED], &contained);
                r = json_add_str(structured, "id", c->job_id);
                if (r >= 0)
                        r = json_add_i64(structured, "exit_code", exit_code);
                if (r >= 0)
                        r = json_add_i64(structured, "signal", record_signal(c->record));
                if (r >= 0)
                        r = json_add_bool(structured, "timed_out", record_timed_out(c->record));
                if (r >= 0)
                        r = json_add_bool(structured, "output_truncated", cut || truncated);
                if (r >= 0)
                        r = json_add_bool(structured, "contained", contained);
                if (r >= 0)
                        r = json_add_str(structured, "mechanism", mechanism ?: "");
                const char *request_id = dict_get_string(c->record, &record_keys[RECORD_KEY_REQUEST_ID]);
                if (r >= 0 && request_id && request_id[0])
                        r = json_add_str(structured, "request_id", request_id);
                /* As launched here; a job of elsewhere by its record. */
                json_object *box = dict_get(c->record, &record_keys[RECORD_KEY_SANDBOX]);
                const char *profile = mcp_job_sandbox(c->server, c->job_id)
                        ?: (box && json_object_is_type(box, json_type_object) && json_object_object_length(box) > 0
                            ? "custom" : "off");
                if (r >= 0)
                        r = json_add_str(structured, "sandbox", profile);
                /* The names its proxy refused: the model asks its user, not
                 * for a looser sandbox. */
                json_object *denied = dict_get(c->record, &record_keys[RECORD_KEY_NETWORK_DENIED]);
                if (r >= 0 && denied && json_object_is_type(denied, json_type_object) &&
                    json_object_object_length(denied) > 0)
                        r = json_object_object_add(structured, "network_denied", json_object_get(denied));
        }
        if (r < 0)
                return mcp_call_fail(c, "Out of memory.");
        return mcp_call_answer(c, text, TAKE_PTR(structured));
}

static int run_answer(McpCall *c, sd_bus_message *reply) {
        return answer_with_output(c, json_object_new_object(), true);
}

static int read_then_answer(McpCall *c, sd_bus_message *reply) {
        return mcp_read_output(c, run_answer);
}

static int on_launched(McpCall *c, sd_bus_message *reply) {
        const char *id, *path;
        int r;

        r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return mcp_call_fail(c, "bgrund's answer to Launch could not be read: %s", strerror(-r));
        c->job_id = strdup(id);
        if (!c->job_id)
                return mcp_call_fail(c, "Out of memory.");
        mcp_job_add(c->server, id, c->run_sandbox ?: "off");
        if (c->cancelled) {
                /* The model gave up on it before it knew its id: nothing of it
                 * runs on unseen. */
                mcp_stop_job(c->server, id);
                mcp_call_free(c);
                return 0;
        }
        c->offset = 0;
        c->deadline = now_monotonic_usec() +
                (mcp_args_has(&c->args, MCP_ARG_WAIT_SEC) ? c->args.wait_usec : RUN_WAIT_DEFAULT_USEC);
        return mcp_call_wait(c, read_then_answer);
}

static void strv_freep_local(char ***p) {
        for (char **e = *p; e && *e; e++)
                free(*e);
        free(*p);
}

/* What makes programs behave for a reader that is not a terminal: no
 * colour, no pager, no editor or password prompt, unbuffered Python (the
 * contract's list). TERM is dumb but on a terminal of the job's own. */
static const char *const reader_environment[] = {
        "NO_COLOR=1", "PAGER=cat", "GIT_PAGER=cat", "GH_PAGER=cat", "GIT_EDITOR=true",
        "PYTHONUNBUFFERED=1", "GIT_TERMINAL_PROMPT=0",
};

/* Whether name is set in the server's environment or the call's env. */
static bool environment_has(McpCall *c, const char *name) {
        return getenv(name) || (c->args.env && json_object_object_get_ex(c->args.env, name, NULL));
}

/* Environment: the server's own, filtered as bgrun run filters it, then
 * reader_environment (and LANG=C.UTF-8 where no locale is set), then the
 * call's env, which wins (K=V strings kept in ret_storage). */
static int launch_environment(McpCall *c, char ***ret_storage, const char ***ret_env) {
        _cleanup_(strv_freep_local) char **storage = NULL;
        size_t n = ELEMENTSOF(reader_environment) + 2, k = 0;
        RunEnvOptions o = { .remote = c->server->options.remote, .tty = c->args.tty };

        if (c->args.env)
                n += (size_t) json_object_object_length(c->args.env);
        storage = calloc(n + 1, sizeof(char *));
        if (!storage)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(reader_environment); i++)
                if (!(storage[k++] = strdup(reader_environment[i])))
                        return -ENOMEM;
        if (!(storage[k++] = strdup(c->args.tty ? "TERM=xterm-256color" : "TERM=dumb")))
                return -ENOMEM;
        if (!environment_has(c, "LANG") && !environment_has(c, "LC_ALL") && !(storage[k++] = strdup("LANG=C.UTF-8")))
                return -ENOMEM;
        if (c->args.env) {
                json_object_object_foreach(c->args.env, key, value) {
                        if (asprintf(&storage[k], "%s=%s", key, json_object_get_string(value)) < 0) {
                                storage[k] = NULL;
                                return -ENOMEM;
                        }
                        k++;
                }
        }
        o.setenv = storage;
        if (run_environment(environ, &o, ret_env, &n) < 0)
                return -ENOMEM;
        *ret_storage = TAKE_PTR(storage);
        return 0;
}


/* Launch's options for c's run: its sandbox, the arguments that give an
 * option (MCP_LAUNCH_ARG_TABLE), and the server's own. */
static int append_options(McpCall *c, sd_bus_message *m, const char *const *env, const JobSpec *sandbox) {
        _cleanup_(launch_args_done) LaunchArgs l = {};

        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (launch_options[i].flags & LAUNCH_SANDBOX && launch_option_is_set(i, sandbox))
                        launch_args_set_from(&l, i, sandbox);
        mcp_args_launch_options(&c->args, &l);
        /* The call deadline: past it this run answered already, the job
         * must not start later behind the model's back. */
        if (c->server->call_timeout_usec < UINT64_MAX / 4)
                launch_args_set(&l, LAUNCH_OPTION_LAUNCH_DEADLINE_USEC,
                                (LaunchValue) { .u64 = now_realtime_usec() + c->server->call_timeout_usec });
        if (env[0])
                launch_args_set(&l, LAUNCH_OPTION_ENVIRONMENT, (LaunchValue) { .strv = (char *const *) env });
        /* At most once: the model's request_id, or one of our own, which
         * a timed-out run's answer names. */
        launch_args_set(&l, LAUNCH_OPTION_REQUEST_ID, (LaunchValue) { .str = c->run_request_id });
        if (c->args.stdin_pipe && !c->args.tty)
                launch_args_set(&l, LAUNCH_OPTION_STDIN, (LaunchValue) { .str = "pipe" });
        /* Bound: bgrund stops the job when this server's connection goes,
         * even when the server is killed outright. */
        if (c->server->bind_jobs)
                launch_args_set(&l, LAUNCH_OPTION_BIND_TO_CALLER, (LaunchValue) { .u64 = 1 });
        return launch_args_append(&l, m);
}

/* A call's cwd: as given, or taken from the workspace (the server's, else
 * its working directory); none: the workspace itself. */
static int absolute_cwd(McpCall *c, char **ret) {
        _cleanup_free_ char *here = NULL;
        const char *workspace = c->server->options.workspace;

        if (c->args.cwd && c->args.cwd[0] == '/')
                return (*ret = strdup(c->args.cwd)) ? 0 : -ENOMEM;
        if (!c->args.cwd && !workspace && c->server->options.remote)
                return (*ret = strdup("/")) ? 0 : -ENOMEM;
        here = workspace ? strdup(workspace) : getcwd(NULL, 0);
        if (!here)
                return -errno;
        if (!c->args.cwd || !c->args.cwd[0]) {
                *ret = TAKE_PTR(here);
                return 0;
        }
        return asprintf(ret, "%s/%s", streq(here, "/") ? "" : here, c->args.cwd) < 0 ? -ENOMEM : 0;
}

int mcp_tool_run(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *command = NULL, *cwd = NULL;
        _cleanup_(strv_freep_local) char **storage = NULL;
        _cleanup_free_ const char **env = NULL;
        _cleanup_(launch_options_free_fields) JobSpec sandbox = {};
        _cleanup_free_ char *refused = NULL;
        int r;

        /* argv goes as Argv: the words exactly, no shell. */
        command = strdup(c->args.command ?: "");
        if (!command)
                return mcp_call_fail(c, "Out of memory.");
        r = mcp_run_request_id(c);
        if (r < 0)
                return mcp_call_fail(c, "Cannot make a request id: %s", strerror(-r));
        r = absolute_cwd(c, &cwd);
        if (r < 0)
                return mcp_call_fail(c, "Cannot tell the working directory: %s", strerror(-r));
        r = launch_environment(c, &storage, &env);
        if (r < 0)
                return mcp_call_fail(c, "Out of memory.");
        r = mcp_sandbox_for_run(&c->server->options, &c->args, cwd, &sandbox, &c->run_sandbox, &refused);
        if (r == -ENOMEM)
                return mcp_call_fail(c, "Out of memory.");
        if (r < 0)
                return mcp_call_fail(c, "%s", refused);

        r = mcp_new_call(c, "Launch", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "sss", command, c->args.session ?: c->server->session, cwd);
        if (r >= 0)
                r = append_options(c, m, env, &sandbox);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the Launch call: %s", strerror(-r));
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_launched);
}

static int set_job(McpCall *c) {
        c->job_id = strdup(c->args.id);
        if (!c->job_id)
                return mcp_call_fail(c, "Out of memory.");
        c->offset = mcp_cursor_get(c->server, c->job_id);
        return 0;
}

int mcp_tool_wait(McpCall *c) {
        int r = set_job(c);
        if (r < 0)
                return r;
        c->deadline = now_monotonic_usec() +
                (mcp_args_has(&c->args, MCP_ARG_TIMEOUT_SEC) ? c->args.timeout_usec : WAIT_TIMEOUT_DEFAULT_USEC);
        return mcp_call_wait(c, read_then_answer);
}

static int output_answer(McpCall *c, sd_bus_message *reply) {
        _cleanup_json_ json_object *st = json_object_new_object();

        if (!st || json_add_bool(st, "complete", c->complete) < 0)
                return mcp_call_fail(c, "Out of memory.");
        return answer_with_output(c, TAKE_PTR(st), false);
}

static int output_read(McpCall *c, sd_bus_message *reply) {
        return mcp_read_output(c, output_answer);
}

int mcp_tool_output(McpCall *c) {
        int r = set_job(c);
        if (r < 0)
                return r;
        if (mcp_args_has(&c->args, MCP_ARG_OFFSET))
                c->offset = c->args.offset;
        if (mcp_args_has(&c->args, MCP_ARG_MAX_BYTES))
                c->max_bytes = c->args.max_bytes;
        c->output_mode = true;
        c->deadline = now_monotonic_usec() + c->args.wait_usec;
        return mcp_call_wait(c, output_read);
}

static int write_input_answer(McpCall *c, sd_bus_message *reply) {
        return answer_with_output(c, json_object_new_object(), false);
}

static int write_input_read(McpCall *c, sd_bus_message *reply) {
        return mcp_read_output(c, write_input_answer);
}

static int on_written(McpCall *c, sd_bus_message *reply) {
        c->deadline = now_monotonic_usec() +
                (mcp_args_has(&c->args, MCP_ARG_WAIT_SEC) ? c->args.wait_usec : WRITE_INPUT_WAIT_DEFAULT_USEC);
        return mcp_call_wait(c, write_input_read);
}

int mcp_tool_write_input(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        const char *text = c->args.text ?: "";
        int r;

        r = set_job(c);
        if (r < 0)
                return r;
        r = mcp_new_call(c, "WriteInput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", c->job_id);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', text, strlen(text));
        if (r >= 0)
                r = sd_bus_message_append(m, "b", c->args.eof);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the WriteInput call: %s", strerror(-r));
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_written);
}
