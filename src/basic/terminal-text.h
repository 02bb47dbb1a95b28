/* SPDX-License-Identifier: MIT */
#pragma once

/* The plain text of what a program wrote to a terminal: what a reader of a
 * log wants, not what made the terminal draw it. A filter fed the output in
 * chunks of any size (a sequence cut between two chunks is handled), with
 * no allocation; the output is the same however the input was cut.
 *
 * Dropped: escape sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL or
 * ESC \", DCS/SOS/PM/APC the same way, any other "ESC ... final"), BEL, DEL,
 * and every other C0 control but LF and TAB. A string sequence (OSC...) left
 * open ends at the next LF, which is kept: one stray ESC ] never swallows
 * the rest of a log. CAN and SUB cancel a sequence, as in a terminal.
 * Line ends: CR LF is LF. A CR followed by text starts the line again: of a
 * line rewritten by CRs (a progress bar), the text after the last CR is
 * kept, what the terminal showed last (a shorter rewrite does not keep the
 * tail of the longer one before it, as the terminal would). A CR at the end
 * of the input, or before LF, takes nothing away.
 * Backspace takes back the character before it on the line (the whole
 * UTF-8 sequence), as the next character would overwrite it: "_\bx" is
 * "x"; at the start of a line it does nothing.
 * Other bytes, UTF-8 or not, pass unchanged.
 * A line is held until its LF (a CR or a backspace may still take it back),
 * TERMINAL_TEXT_LINE_MAX bytes at most: past that, what is held is passed
 * on, and no longer taken back. */

#include <stdbool.h>
#include <stddef.h>

#define TERMINAL_TEXT_LINE_MAX 4096U

typedef struct TerminalText {
        unsigned state;
        bool cr_pending;        /* a CR came: the next text starts the line again */
        size_t line_len;
        char line[TERMINAL_TEXT_LINE_MAX];
} TerminalText;

/* The most one feed of n bytes writes: n and what was held. */
#define TERMINAL_TEXT_OUT_MAX(n) ((n) + TERMINAL_TEXT_LINE_MAX)

void terminal_text_init(TerminalText *t);

/* Filters n bytes of in, writes the text that is final into out (room for
 * TERMINAL_TEXT_OUT_MAX(n) bytes) and returns how many bytes it wrote. */
size_t terminal_text_feed(TerminalText *t, const void *in, size_t n, char *out);

/* The end of the input (or a pause a reader should see): writes the line
 * held, if any, into out (room for TERMINAL_TEXT_LINE_MAX bytes) and
 * returns its length. A sequence left open stays open. */
size_t terminal_text_flush(TerminalText *t, char *out);
