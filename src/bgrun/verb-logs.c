/* SPDX-License-Identifier: MIT */
/* bgrun logs: a job's output, all of it, its tail (-n), from an offset
 * (--offset, for a program that polls: --json says where to go on), or as
 * it comes (-f). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"
#include "output-layout.h"
#include "output.h"
#include "print.h"
#include "terminal-text.h"
#include "utf8.h"
#include "utf8.h"
#include "verbs.h"

#define LOGS_CHUNK (64U * 1024U)
/* One logs --json answer carries at most this much; next says where the
 * rest is. */
#define LOGS_JSON_MAX (16U * 1024U * 1024U)

typedef struct Bytes {
        char *data;
        size_t size, allocated;
} Bytes;

static void bytes_done(Bytes *b) {
        free(b->data);
}

static int bytes_append(Bytes *b, const void *p, size_t n) {
        if (n == 0)
                return 0; /* an empty answer's data may be NULL: memcpy() must not see it */
        if (b->size + n > b->allocated) {
                size_t a = b->allocated * 2 > b->size + n ? b->allocated * 2 : b->size + n;
                char *d = realloc(b->data, a);
                if (!d)
                        return -ENOMEM;
                b->data = d;
                b->allocated = a;
        }
        memcpy(b->data + b->size, p, n);
        b->size += n;
        return 0;
}

/* The bytes from offset that there are now (at most LOGS_JSON_MAX), with a
 * dropped middle as the marker line the output keeps for it. *ret_next:
 * the offset after them; *ret_complete: the job ended and nothing follows. */
static int read_from(sd_bus *bus, const char *id, uint64_t offset, Bytes *b, uint64_t *ret_next,
                     bool *ret_complete) {
        uint64_t next = offset;
        int complete = false, r;

        while (b->size < LOGS_JSON_MAX) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const void *data;
                size_t size;
                uint64_t n, start;

                r = call_read_output(bus, id, next, MIN(LOGS_CHUNK, LOGS_JSON_MAX - b->size), &reply, &data, &size,
                                     &n, &complete);
                if (r < 0)
                        return r;
                start = n >= next + size ? n - size : next;
                if (start > next) {
                        char marker[OUTPUT_MARKER_MAX];
                        if (bytes_append(b, marker, output_marker(start - next, marker)) < 0)
                                return log_oom();
                }
                if (bytes_append(b, data, size) < 0)
                        return log_oom();
                next = start + size;
                if (complete || size == 0)
                        break;
        }
        *ret_next = next;
        *ret_complete = complete;
        return 0;
}

/* logs --offset N --json: {"data", "offset", "next", "complete"}. */
static int logs_json(sd_bus *bus, const Args *args) {
        _cleanup_(bytes_done) Bytes raw = {}, text = {};
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ char *valid = NULL;
        const Bytes *b = &raw;
        uint64_t next = 0;
        bool complete = false;
        size_t len;
        int r;

        r = read_from(bus, args->words[1], args->offset, &raw, &next, &complete);
        if (r < 0)
                return r;

        /* A character cut at the end comes whole with the next call. */
        if (!complete) {
                size_t keep = utf8_prefix_len(raw.data ?: "", raw.size);
                next -= raw.size - keep;
                raw.size = keep;
        }
        if (args->plain) {
                TerminalText t;
                char out[TERMINAL_TEXT_OUT_MAX(LOGS_CHUNK)];

                terminal_text_init(&t);
                for (size_t i = 0; i < raw.size; i += LOGS_CHUNK) {
                        size_t k = MIN((size_t) LOGS_CHUNK, raw.size - i);
                        if (bytes_append(&text, out, terminal_text_feed(&t, raw.data + i, k, out)) < 0)
                                return log_oom();
                }
                if (bytes_append(&text, out, terminal_text_flush(&t, out)) < 0)
                        return log_oom();
                b = &text;
        }

        valid = utf8_make_valid(b->data ?: "", b->size, &len);
        if (!valid)
                return log_oom();
        o = json_object_new_object();
        if (!o || json_object_object_add(o, "data", json_object_new_string_len(valid, (int) len)) < 0 ||
            json_object_object_add(o, "offset", json_object_new_uint64(args->offset)) < 0 ||
            json_object_object_add(o, "next", json_object_new_uint64(next)) < 0 ||
            json_object_object_add(o, "complete", json_object_new_boolean(complete)) < 0)
                return log_oom();
        return print_json(o);
}

int verb_logs(sd_bus *bus, const Args *args) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        _cleanup_json_ json_object *first = NULL, *rec = NULL;
        bool from_offset = args->options_seen & OPTION_OFFSET;
        int r;

        if (args->json)
                return logs_json(bus, args);

        output_set_plain(args->plain);

        if (from_offset && !args->follow)
                /* By offset: ReadOutput's offsets are the job's. */
                src = (OutputSource) { .id = args->words[1], .fd = -EBADF, .offset = args->offset };
        else {
                r = output_open(bus, args->words[1], 0, &src, args->follow ? &first : NULL);
                if (r < 0)
                        return r;
        }
        if (from_offset && args->follow) {
                src.fd = safe_close(src.fd);
                src.live = false;
                src.offset = args->offset;
        }

        if (args->options_seen & OPTION_LINES) {
                r = output_seek_tail(bus, &src, args->lines);
                if (r < 0)
                        return r;
        }

        if (args->follow)
                r = output_follow(bus, &src, NULL, TAKE_PTR(first), &rec);
        else
                r = output_pump(bus, &src, 0);
        if (r >= 0)
                r = output_end();
        if (r < 0)
                return r;

        return EXIT_SUCCESS;
}
