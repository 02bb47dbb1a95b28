/* SPDX-License-Identifier: MIT */
/* What the server holds for its client, below the calls and tools that use
 * it: stdout's queue (a slow client never blocks the loop), whether stdin
 * is read (mcp-server.h says what counts), the protocol version spoken,
 * and this server's own jobs and where its reads of them stopped. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mcp-server.h"

struct OutBuffer {
        OutBuffer *next;
        size_t len, done;
        char *data;
};

static void out_pop(McpServer *s) {
        OutBuffer *b = s->out_head;

        s->out_head = b->next;
        if (!s->out_head)
                s->out_tail = NULL;
        s->out_bytes -= b->len;
        free(b->data);
        free(b);
}

/* Writes what stdout takes now; the rest waits for it to be writable. */
void mcp_flush_output(McpServer *s) {
        bool was_broken = s->output_broken;

        while (s->out_head && !s->output_broken) {
                OutBuffer *b = s->out_head;
                ssize_t k = write(STDOUT_FILENO, b->data + b->done, b->len - b->done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN) {
                        (void) sd_event_source_set_enabled(s->output_source, SD_EVENT_ON);
                        mcp_input_update(s);
                        return;
                }
                if (k < 0) {
                        /* The client is gone: as the end of its input. */
                        log_debug_errno(errno, "Writing to stdout failed: %m");
                        s->output_broken = true;
                        break;
                }
                b->done += (size_t) k;
                if (b->done == b->len)
                        out_pop(s);
        }
        while (s->output_broken && s->out_head)
                out_pop(s);
        (void) sd_event_source_set_enabled(s->output_source, SD_EVENT_OFF);
        mcp_input_update(s);
        /* The client is gone: the end (the server's, mcp_serve()), but not
         * from here, where a call that is answering may still be on the
         * stack. */
        if (s->output_broken && !was_broken && !s->ending &&
            sd_event_source_set_enabled(s->output_broken_source, SD_EVENT_ONESHOT) < 0)
                (void) sd_event_exit(s->event, EXIT_FAILURE);
}

/* Whether stdin is read: not while what the server holds for the client is
 * past MCP_HELD_MAX, until half of it is left (mcp-server.h says what
 * counts). */
void mcp_input_update(McpServer *s) {
        if (!s->input_source || s->ending)
                return;
        size_t held = s->out_bytes + s->calls_held;
        int enabled = SD_EVENT_OFF;
        (void) sd_event_source_get_enabled(s->input_source, &enabled);
        bool over = held > MCP_HELD_MAX, under = held <= MCP_HELD_MAX / 2;
        if (enabled != SD_EVENT_OFF && over)
                (void) sd_event_source_set_enabled(s->input_source, SD_EVENT_OFF);
        else if (enabled == SD_EVENT_OFF && under)
                (void) sd_event_source_set_enabled(s->input_source, SD_EVENT_ON);
}

void mcp_send(McpServer *s, char *text) {
        OutBuffer *b;

        if (!text) {
                log_oom();
                return;
        }
        if (s->output_broken) {
                free(text);
                return;
        }
        b = calloc(1, sizeof *b);
        if (!b) {
                free(text);
                log_oom();
                return;
        }
        b->data = text;
        b->len = strlen(text);
        s->out_bytes += b->len;
        if (s->out_tail)
                s->out_tail->next = b;
        else
                s->out_head = b;
        s->out_tail = b;
        if (s->out_head == b)
                mcp_flush_output(s);
}

bool mcp_has_structured(const McpServer *s) {
        /* Dates compare as strings. */
        return strcmp(s->protocol_version ?: MCP_PROTOCOL_LATEST, "2025-06-18") >= 0;
}

uint64_t mcp_cursor_get(McpServer *s, const char *id) {
        json_object *v;
        return json_object_object_get_ex(s->cursors, id, &v) ? (uint64_t) json_object_get_int64(v) : 0;
}

void mcp_cursor_set(McpServer *s, const char *id, uint64_t offset) {
        (void) json_object_object_add(s->cursors, id, json_object_new_int64((int64_t) offset));
}

void mcp_job_add(McpServer *s, const char *id, const char *sandbox) {
        (void) json_object_object_add(s->jobs, id, NULL);
        (void) json_object_object_add(s->launched, id, json_object_new_string(sandbox));
}

const char *mcp_job_sandbox(McpServer *s, const char *id) {
        json_object *v;
        return json_object_object_get_ex(s->launched, id, &v) ? json_object_get_string(v) : NULL;
}

void mcp_job_ended(McpServer *s, const char *id) {
        json_object_object_del(s->jobs, id);
}

void mcp_output_drop(McpServer *s) {
        while (s->out_head)
                out_pop(s);
}
