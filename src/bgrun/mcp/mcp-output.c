/* SPDX-License-Identifier: MIT */
/* Output cut to a limit, with one marker line, in valid UTF-8. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mcp-output.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

size_t mcp_utf8_sequence(const uint8_t *s, size_t n) {
        uint8_t c, lo = 0x80, hi = 0xbf;
        size_t len;

        if (n == 0)
                return 0;
        c = s[0];
        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                len = 2;
        else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f; /* no surrogates */
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
        } else
                return 0;
        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return len;
}

/* What the character at s becomes: its own bytes, or the replacement. */
static size_t out_len(const uint8_t *s, size_t n, size_t *ret_in) {
        size_t k = mcp_utf8_sequence(s, n);

        *ret_in = k ?: 1;
        return k ?: sizeof replacement - 1;
}

static char *put(char *p, const uint8_t *s, size_t n) {
        size_t in, out = out_len(s, n, &in);

        if (out == in)
                memcpy(p, s, in);
        else
                memcpy(p, replacement, out);
        return p + out;
}

/* How many bytes of data, from its start, fit into budget bytes of text. */
static size_t fit_forward(const uint8_t *data, size_t n, size_t budget) {
        size_t i = 0, used = 0;

        while (i < n) {
                size_t in, out = out_len(data + i, n - i, &in);
                if (used + out > budget)
                        break;
                used += out;
                i += in;
        }
        return i;
}

/* Where the last part of data that fits into budget bytes of text begins:
 * at a character's start (a continuation byte there would stand alone). */
static size_t fit_backward(const uint8_t *data, size_t n, size_t budget) {
        size_t start = n > budget ? n - budget : 0, used = 0;

        for (unsigned k = 0; k < 3 && start > 0 && start < n && (data[start] & 0xc0) == 0x80; k++)
                start++;
        /* The text of [start, n) may still be over budget: replacements
         * grow. Drop characters from the front until it fits. */
        for (size_t i = start; i < n;) {
                size_t in;
                used += out_len(data + i, n - i, &in);
                i += in;
        }
        while (used > budget && start < n) {
                size_t in;
                used -= out_len(data + start, n - start, &in);
                start += in;
        }
        return start;
}

static char *put_all(char *p, const uint8_t *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t in;
                (void) out_len(s + i, n - i, &in);
                p = put(p, s + i, n - i);
                i += in;
        }
        return p;
}

void mcp_output_plan(uint64_t offset, uint64_t available, size_t limit, size_t *ret_head_n,
                     uint64_t *ret_tail_offset, size_t *ret_tail_n) {
        size_t half = (limit - MCP_OUTPUT_MARKER_MAX) / 2;

        if (available <= limit) {
                *ret_head_n = (size_t) available;
                *ret_tail_offset = offset + available;
                *ret_tail_n = 0;
                return;
        }
        *ret_head_n = half;
        *ret_tail_n = half;
        *ret_tail_offset = offset + available - half;
}

size_t mcp_output_range_end(const uint8_t *data, size_t n) {
        for (size_t i = n; i > n - n / 4; i--)
                if (data[i - 1] == '\n')
                        return i;
        /* A character cut at the end: back to where it starts. */
        size_t start = n;
        while (start > 0 && n - start < 4 && (data[start - 1] & 0xC0) == 0x80)
                start--;
        if (start == 0)
                return n;
        size_t lead_at = start - 1, have = n - lead_at;
        uint8_t lead = data[lead_at];
        size_t need = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
        if (have >= need)
                return n;                     /* the last character is whole */
        return lead_at > 0 ? lead_at : n;     /* cut, unless it is all there is */
}

int mcp_output_format(const OutputChunks *c, size_t limit, char **ret, size_t *ret_len) {
        size_t half = (limit - MCP_OUTPUT_MARKER_MAX) / 2, head_used, tail_start;
        const uint8_t *tail = c->tail;
        size_t tail_n = c->tail_n;
        uint64_t tail_offset = c->tail_offset, cut_from, cut_to;
        char *text, *p;

        text = malloc(limit + 1);
        if (!text)
                return -ENOMEM;

        if (!tail && fit_forward(c->head, c->head_n, limit) == c->head_n) {
                p = put_all(text, c->head, c->head_n);
                goto done;
        }
        if (!tail) {
                /* All of it was read, but replacements made it too long. */
                tail = c->head;
                tail_n = c->head_n;
                tail_offset = c->head_offset;
        }

        head_used = fit_forward(c->head, c->head_n, half);
        tail_start = fit_backward(tail, tail_n, half);
        if (tail == c->head && tail_start < head_used)
                tail_start = head_used;
        cut_from = c->head_offset + head_used;
        cut_to = tail_offset + tail_start;
        if (c->filtered && c->tail) {
                cut_from = c->head_offset + c->head_read_n;
                cut_to = c->tail_offset;
        }

        p = put_all(text, c->head, head_used);
        if (cut_to > cut_from)
                p += snprintf(p, MCP_OUTPUT_MARKER_MAX,
                              "\n[bgrun: %llu bytes left out here; read them with output offset=%llu]\n",
                              (unsigned long long) (cut_to - cut_from), (unsigned long long) cut_from);
        p = put_all(p, tail + tail_start, tail_n - tail_start);

done:
        *p = '\0';
        *ret_len = (size_t) (p - text);
        *ret = text;
        return 0;
}
