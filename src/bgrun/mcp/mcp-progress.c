/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "mcp-output.h"
#include "mcp-progress.h"
#include "record.h"
#include "terminal-text.h"
#include "time-util.h"

void mcp_progress_last_line(const void *text, size_t n, char *buf, size_t size) {
        buf[0] = '\0';
        _cleanup_free_ TerminalText *t = malloc(sizeof(TerminalText));
        _cleanup_free_ char *clean = malloc(TERMINAL_TEXT_OUT_MAX(n) + 1);
        if (!t || !clean)
                return;
        terminal_text_init(t);
        size_t k = terminal_text_feed(t, text, n, clean); /* a line not ended stays held: not complete */
        clean[k] = '\0';
        /* The last LF ends the last complete line; the one before it starts it. */
        char *end = memrchr(clean, '\n', k);
        if (!end)
                return;
        *end = '\0';
        char *start = memrchr(clean, '\n', (size_t) (end - clean));
        if (!start && n >= PROGRESS_TAIL_BYTES)
                return; /* the read began inside this line: not whole */
        start = start ? start + 1 : clean;
        /* Its characters, each whole, MCP_PROGRESS_LINE_MAX at most; a byte that
         * is no UTF-8 becomes U+FFFD, as output does elsewhere. */
        size_t out = 0, chars = 0;
        for (const uint8_t *p = (const uint8_t *) start; *p && chars < MCP_PROGRESS_LINE_MAX;) {
                size_t len = mcp_utf8_sequence(p, strlen((const char *) p));
                const char *c = len ? (const char *) p : "\xef\xbf\xbd";
                size_t clen = len ? len : 3;
                if (out + clen + 1 > size)
                        break;
                memcpy(buf + out, c, clen);
                out += clen;
                chars++;
                p += len ? len : 1;
        }
        buf[out] = '\0';
}

static void send_progress(McpCall *c, uint64_t now, uint64_t bytes) {
        double waited = (double) (now - c->started) / 1e6;
        /* progress must grow with every notification. */
        if (waited <= c->progress_sent)
                waited = c->progress_sent + 0.001;
        _cleanup_free_ char *message = NULL;
        int k = c->progress_line[0]
                ? asprintf(&message, "%llu bytes of output so far; last line: %s", (unsigned long long) bytes,
                           c->progress_line)
                : asprintf(&message, "%llu bytes of output so far", (unsigned long long) bytes);
        _cleanup_json_ json_object *p = json_object_new_object();
        if (k < 0 || !p || json_add(p, "progressToken", json_object_get(c->progress_token)) < 0 ||
            json_add(p, "progress", json_object_new_double(waited)) < 0 || json_add_str(p, "message", message) < 0)
                return (void) log_oom();
        if (c->deadline > c->started && c->deadline != UINT64_MAX &&
            json_add(p, "total", json_object_new_double((double) (c->deadline - c->started) / 1e6)) < 0)
                return (void) log_oom();
        mcp_send(c->server, jsonrpc_notification("notifications/progress", TAKE_PTR(p)));
        c->last_progress = now;
        c->progress_sent = waited;
        c->progress_bytes = bytes;
}

static int on_tail(McpCall *c, sd_bus_message *reply) {
        const void *data = NULL;
        size_t n = 0;
        uint64_t bytes = 0;
        /* An error (the job forgotten meanwhile): the line stays as it was. */
        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read_array(reply, 'y', &data, &n) >= 0)
                mcp_progress_last_line(data, n, c->progress_line, sizeof c->progress_line);
        (void) dict_get_uint(c->record, &record_keys[RECORD_KEY_OUTPUT_BYTES], &bytes);
        send_progress(c, now_monotonic_usec(), bytes);
        McpStep next = TAKE_PTR(c->after_progress);
        return next(c, NULL);
}

int mcp_progress(McpCall *c, McpStep next) {
        if (!c->progress_token)
                return next(c, NULL);
        uint64_t now = now_monotonic_usec(), bytes = 0;
        (void) dict_get_uint(c->record, &record_keys[RECORD_KEY_OUTPUT_BYTES], &bytes);
        bool grew = bytes > c->progress_bytes;
        if (!(grew && now - c->last_progress >= PROGRESS_SOON_USEC) && now - c->last_progress < PROGRESS_EVERY_USEC)
                return next(c, NULL);
        if (!grew) {
                send_progress(c, now, bytes);
                return next(c, NULL);
        }
        /* Its last line first: the output's end, read back. */
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint64_t from = bytes > PROGRESS_TAIL_BYTES ? bytes - PROGRESS_TAIL_BYTES : 0;
        int r = mcp_new_call(c, "ReadOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "stu", c->job_id, from, (uint32_t) (bytes - from));
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the ReadOutput call: %s", strerror(-r));
        c->after_progress = next;
        c->step_takes_errors = true;
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_tail);
}
