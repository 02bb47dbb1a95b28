/* SPDX-License-Identifier: MIT */
/* bgrun mcp's progress line (mcp-progress.c): the last complete line of
 * the output's end, cleaned as logs --plain cleans it, 200 characters at
 * most, each whole. */
#include <criterion/criterion.h>
#include <string.h>

#include "mcp-progress.h"

static char buf[4 * MCP_PROGRESS_LINE_MAX + 4];

static const char *last(const char *text) {
        mcp_progress_last_line(text, strlen(text), buf, sizeof buf);
        return buf;
}

Test(mcp_progress, the_last_complete_line) {
        cr_assert_str_eq(last("a\nb\nhalf"), "b", "a line not ended is not complete");
        cr_assert_str_eq(last("a\nb\n"), "b");
        cr_assert_str_eq(last("only\n"), "only");
        cr_assert_str_eq(last("no line yet"), "");
        cr_assert_str_eq(last(""), "");
        cr_assert_str_eq(last("\x1b[31mred\x1b[0m done\r\n"), "red done", "colours and CR LF, as logs --plain");
        cr_assert_str_eq(last("10%\r50%\r100%\n"), "100%", "a progress bar: what the terminal showed last");
}

Test(mcp_progress, at_most_200_characters_each_whole) {
        char text[1200];
        size_t n = 0;
        for (int i = 0; i < 300; i++) { /* é: two bytes */
                text[n++] = '\xc3';
                text[n++] = '\xa9';
        }
        text[n++] = '\n';
        mcp_progress_last_line(text, n, buf, sizeof buf);
        cr_assert_eq(strlen(buf), 400, "200 characters of two bytes: %zu bytes", strlen(buf));
        cr_assert_str_eq(last("bad \xff byte\n"), "bad \xef\xbf\xbd byte", "a byte that is no UTF-8");
}

Test(mcp_progress, a_line_cut_by_the_read_is_not_shown) {
        /* The read of the output's end began inside its only line. */
        char text[PROGRESS_TAIL_BYTES];
        memset(text, 'x', sizeof text - 1);
        text[sizeof text - 1] = '\n';
        mcp_progress_last_line(text, sizeof text, buf, sizeof buf);
        cr_assert_str_eq(buf, "");
}
