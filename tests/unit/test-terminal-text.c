/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "terminal-text.h"

/* The plain text of in, fed in chunks of chunk bytes, then flushed. */
static char *plain(const char *in, size_t len, size_t chunk) {
        TerminalText t;
        char *out = malloc(TERMINAL_TEXT_OUT_MAX(len) + 1);
        size_t w = 0;
        terminal_text_init(&t);
        for (size_t i = 0; i < len; i += chunk)
                w += terminal_text_feed(&t, in + i, len - i < chunk ? len - i : chunk, out + w);
        w += terminal_text_flush(&t, out + w);
        out[w] = 0;
        return out;
}

/* in's plain text is expected, however in is cut into chunks. */
static void check(const char *in, const char *expected) {
        size_t len = strlen(in);
        for (size_t chunk = 1; chunk <= len + 1; chunk++) {
                char *got = plain(in, len, chunk);
                cr_assert_str_eq(got, expected, "%s in chunks of %zu", in, chunk);
                free(got);
        }
}

Test(terminal_text, plain_text_and_utf8_pass_unchanged) {
        check("", "");
        check("hello\tworld\n", "hello\tworld\n");
        check("gr\xc3\xbc\xc3\x9f \xe2\x9c\x93 \xf0\x9f\x99\x82\n", "gr\xc3\xbc\xc3\x9f \xe2\x9c\x93 \xf0\x9f\x99\x82\n");
        check("no newline at the end", "no newline at the end");
        check("\xff\xfe not utf-8\n", "\xff\xfe not utf-8\n");
}

Test(terminal_text, csi_sequences_go) {
        check("\x1b[1;31mred\x1b[0m plain\n", "red plain\n");
        check("\x1b[2J\x1b[H\x1b[?25lscreen\x1b[?25h\n", "screen\n");
        check("a\x1b[38;5;208mb\x1b[Kc\n", "abc\n");
}

Test(terminal_text, osc_and_string_sequences_go_whatever_ends_them) {
        check("\x1b]0;title\x07text\n", "text\n");
        check("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n");
        check("\x1bPdcs stuff\x1b\\after\n", "after\n");
        /* Left open: it ends at the line's end, which stays. */
        check("\x1b]0;never ended\nnext line\n", "\nnext line\n");
}

Test(terminal_text, other_escapes_and_controls_go) {
        check("\x1b" "7saved\x1b" "8\x1b(Bx\x1b=\n", "savedx\n");
        check("ding\x07 \x01\x02\x7f" "done\n", "ding done\n");
        check("\x1b[31\x18text\n", "text\n"); /* CAN cancels */
        check("\x1b[12\nrest\n", "\nrest\n"); /* a broken sequence never eats the LF */
        check("trailing escape \x1b", "trailing escape ");
}

Test(terminal_text, crlf_is_lf_and_a_cr_rewrites_the_line) {
        check("one\r\ntwo\r\n", "one\ntwo\n");
        check("  0%\r 50%\r100%\n", "100%\n");
        check("progress\r\x1b[Kdone\n", "done\n");
        check("kept at the end\r", "kept at the end");
        check("a\r\r\nb\n", "a\nb\n");
        check("first\nsecond\rSECOND\nthird\n", "first\nSECOND\nthird\n");
}

Test(terminal_text, backspace_takes_back_a_character) {
        check("_\bx_\by\n", "xy\n");
        check("abc\b\bX\n", "aX\n");
        check("\b\bstart\n", "start\n");
        check("\xc3\xbc\bu\n", "u\n");                 /* a whole UTF-8 character */
        check("\xf0\x9f\x99\x82\b:)\n", ":)\n");
        check("line\n\bnext\n", "line\nnext\n");        /* never across a line */
}

Test(terminal_text, a_long_line_passes_in_pieces_and_is_not_taken_back) {
        size_t len = TERMINAL_TEXT_LINE_MAX + 100;
        char *in = malloc(len + 8);
        memset(in, 'x', len);
        memcpy(in + len, "\rab\n", 5);
        char *got = plain(in, len + 4, 4096);
        /* What was passed stays; what was held after it is rewritten. */
        cr_assert_eq(strlen(got), TERMINAL_TEXT_LINE_MAX + 3);
        cr_assert_str_eq(got + TERMINAL_TEXT_LINE_MAX, "ab\n");
        free(got);
        free(in);
}
