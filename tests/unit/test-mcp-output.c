/* SPDX-License-Identifier: MIT */
/* Output for a model: within the limit, valid UTF-8, and a marker line that
 * names what was left out and where to read it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-output.h"

static bool valid_utf8(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t k = mcp_utf8_sequence((const uint8_t *) s + i, n - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

Test(mcp_output, short_output_whole) {
        OutputChunks c = { .head = (const uint8_t *) "hello\n", .head_n = 6 };
        char *t;
        size_t n;

        cr_assert_eq(mcp_output_format(&c, 1024, &t, &n), 0);
        cr_assert_str_eq(t, "hello\n");
        cr_assert_eq(n, 6);
        free(t);
}

Test(mcp_output, invalid_bytes_replaced) {
        OutputChunks c = { .head = (const uint8_t *) "a\xff" "b\xe2\x82" "c\xed\xa0\x80", .head_n = 9 };
        char *t;
        size_t n;

        cr_assert_eq(mcp_output_format(&c, 1024, &t, &n), 0);
        cr_assert(valid_utf8(t, n));
        cr_assert_str_eq(t, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        free(t);
}

Test(mcp_output, plan) {
        size_t head, tail;
        uint64_t tail_offset;

        mcp_output_plan(100, 500, 1024, &head, &tail_offset, &tail);
        cr_assert_eq(head, 500);
        cr_assert_eq(tail, 0);
        mcp_output_plan(100, 100000, 1024, &head, &tail_offset, &tail);
        cr_assert_eq(head, (1024 - MCP_OUTPUT_MARKER_MAX) / 2);
        cr_assert_eq(tail, head);
        cr_assert_eq(tail_offset, 100 + 100000 - tail);
}

/* Whole lines of é: the data ends on a character. */
#define N (61 * 1640)

Test(mcp_output, head_marker_tail) {
        size_t limit = 1024, head_n, tail_n, n;
        uint64_t tail_offset;
        char *data = malloc(N), *t, marker[200];

        /* Lines of é (2 bytes each) and newlines, so cuts fall inside characters. */
        for (size_t i = 0; i < N; i++)
                data[i] = i % 61 == 60 ? '\n' : (i % 61 % 2 ? '\xa9' : '\xc3');
        mcp_output_plan(5000, N, limit, &head_n, &tail_offset, &tail_n);
        OutputChunks c = {
                .head = (const uint8_t *) data, .head_n = head_n, .head_offset = 5000,
                .tail = (const uint8_t *) data + N - tail_n, .tail_n = tail_n, .tail_offset = tail_offset,
        };
        cr_assert_eq(mcp_output_format(&c, limit, &t, &n), 0);
        cr_assert_leq(n, limit);
        cr_assert(valid_utf8(t, n));
        cr_assert_not_null(strstr(t, "bytes left out here; read them with output offset="));

        /* The marker's figures add up: kept + left out = all. */
        unsigned long long left, at;
        const char *m = strstr(t, "\n[bgrun: ");
        cr_assert_not_null(m);
        cr_assert_eq(sscanf(m, "\n[bgrun: %llu bytes left out here; read them with output offset=%llu]", &left, &at), 2);
        cr_assert_geq(at, 5000 + head_n - 3);
        cr_assert_leq(at, 5000 + head_n);
        snprintf(marker, sizeof marker, "\n[bgrun: %llu bytes left out here; read them with output offset=%llu]\n",
                 left, at);
        cr_assert_eq(n - strlen(marker) + left, N, "kept %zu, left out %llu", n - strlen(marker), left);
        free(t);
        free(data);
}

Test(mcp_output, replacements_never_pass_the_limit) {
        size_t limit = 1024, n;
        uint8_t data[1024];
        char *t;

        /* Every byte becomes 3: the raw bytes fit, the text would not. */
        memset(data, 0xff, sizeof data);
        OutputChunks c = { .head = data, .head_n = sizeof data };
        cr_assert_eq(mcp_output_format(&c, limit, &t, &n), 0);
        cr_assert_leq(n, limit);
        cr_assert(valid_utf8(t, n));
        cr_assert_not_null(strstr(t, "left out"));
        free(t);
}

/* A terminal's plain text is shorter than what was read: the marker names
 * the offsets of what was read, not of the text. */
Test(mcp_output, filtered_chunks_name_the_offsets_read) {
        uint8_t head[1000], tail[1000];
        char *t, *m;
        size_t n;
        unsigned long long left, at;

        memset(head, 'h', sizeof head);
        memset(tail, 't', sizeof tail);
        OutputChunks c = {
                .head = head, .head_n = 300, .head_offset = 100, .tail = tail, .tail_n = 200,
                .tail_offset = 50000, .filtered = true, .head_read_n = 432,
        };
        cr_assert_eq(mcp_output_format(&c, 1024, &t, &n), 0);
        m = strstr(t, "\n[bgrun: ");
        cr_assert_not_null(m);
        cr_assert_eq(sscanf(m, "\n[bgrun: %llu bytes left out here; read them with output offset=%llu]", &left, &at), 2);
        cr_assert_eq(at, 100 + 432);
        cr_assert_eq(left, 50000 - 532);
        free(t);
}

/* A range cut short ends after the last newline of its last quarter, else
 * at a whole character: the next read goes on from there and no line and
 * no character is cut. */
Test(mcp_output, a_range_cut_short_ends_at_a_line) {
        const uint8_t lines[] = "aaaa\nbbbb\ncccc\ndd";
        cr_assert_eq(mcp_output_range_end(lines, sizeof lines - 1), 15, "after \"cccc\\n\"");
        const uint8_t early[] = "a\nbbbbbbbbbbbbbbbbbbbb";
        cr_assert_eq(mcp_output_range_end(early, sizeof early - 1), sizeof early - 1,
                     "a newline before the last quarter: not there");
        const uint8_t cut[] = "xxxxxxxxxx\xc3\xa9\xe2\x82"; /* é, then a 3-byte character cut after 2 */
        cr_assert_eq(mcp_output_range_end(cut, sizeof cut - 1), 12, "the cut character goes to the next read");
        const uint8_t whole[] = "xxxxxxxxxx\xe2\x82\xac";
        cr_assert_eq(mcp_output_range_end(whole, sizeof whole - 1), 13, "a whole character stays");
        cr_assert_eq(mcp_output_range_end(lines, 0), 0);
}
