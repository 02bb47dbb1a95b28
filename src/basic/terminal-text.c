/* SPDX-License-Identifier: MIT */
/* The plain text of terminal output: a small state machine over bytes (the
 * states of ECMA-48's escape sequences, simplified to what ends them). */
#include <string.h>

#include "terminal-text.h"

enum {
        STATE_TEXT,
        STATE_ESC,              /* ESC seen */
        STATE_ESC_INTERMEDIATE, /* ESC, then 0x20-0x2F: until a final byte */
        STATE_CSI,              /* ESC [: parameters, intermediates, a final byte */
        STATE_STRING,           /* ESC ] (OSC), ESC P, X, ^, _: until BEL or ST */
        STATE_STRING_ESC,       /* ESC inside a string: ST if \ follows */
};

#define ESC 0x1b
#define BEL 0x07
#define BS 0x08
#define CAN 0x18
#define SUB 0x1a

void terminal_text_init(TerminalText *t) {
        t->state = STATE_TEXT;
        t->cr_pending = false;
        t->line_len = 0;
}

static size_t take_line(TerminalText *t, char *out) {
        size_t n = t->line_len;
        memcpy(out, t->line, n);
        t->line_len = 0;
        return n;
}

/* A byte of text onto the line; a full line is passed on first. */
static size_t put_text(TerminalText *t, unsigned char c, char *out) {
        size_t n = 0;
        if (t->cr_pending) {
                t->cr_pending = false;
                t->line_len = 0;
        }
        if (t->line_len == TERMINAL_TEXT_LINE_MAX)
                n = take_line(t, out);
        t->line[t->line_len++] = (char) c;
        return n;
}

/* Backspace: the last character of the line goes (a UTF-8 sequence whole:
 * its continuation bytes, then its first). */
static void back_space(TerminalText *t) {
        if (t->cr_pending)
                return; /* at the start of the line already */
        size_t k = 0;
        while (t->line_len > 0 && k < 3 && ((unsigned char) t->line[t->line_len - 1] & 0xc0) == 0x80) {
                t->line_len--;
                k++;
        }
        if (t->line_len > 0)
                t->line_len--;
}

/* A byte in STATE_TEXT; returns the bytes written to out. */
static size_t text_byte(TerminalText *t, unsigned char c, char *out) {
        switch (c) {
        case '\n': {
                t->cr_pending = false;
                size_t n = take_line(t, out);
                out[n++] = '\n';
                return n;
        }
        case '\r':
                t->cr_pending = true;
                return 0;
        case '\t':
                return put_text(t, c, out);
        case BS:
                back_space(t);
                return 0;
        case ESC:
                t->state = STATE_ESC;
                return 0;
        default:
                /* C0 controls (BEL among them) and DEL draw nothing. */
                if (c < 0x20 || c == 0x7f)
                        return 0;
                return put_text(t, c, out);
        }
}

/* A byte in a sequence: moves the state on. Returns false if the byte is
 * not the sequence's, and is to be read as text. */
static bool sequence_byte(TerminalText *t, unsigned char c) {
        if (c == CAN || c == SUB) {
                t->state = STATE_TEXT;
                return true;
        }
        switch (t->state) {
        case STATE_ESC:
                if (c == '[')
                        t->state = STATE_CSI;
                else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_')
                        t->state = STATE_STRING;
                else if (c >= 0x20 && c <= 0x2f)
                        t->state = STATE_ESC_INTERMEDIATE;
                else if (c == ESC)
                        return true; /* ESC ESC: the first is lost, as in a terminal */
                else if (c >= 0x30 && c <= 0x7e)
                        t->state = STATE_TEXT;
                else {
                        t->state = STATE_TEXT;
                        return false;
                }
                return true;
        case STATE_ESC_INTERMEDIATE:
        case STATE_CSI:
                /* Parameters and intermediates 0x20-0x3F, a final 0x40-0x7E
                 * (for ESC intermediates, 0x30-0x7E). Anything else ends the
                 * sequence and is read as text: no LF is ever swallowed. */
                if (c >= 0x20 && c <= 0x7e) {
                        if (c >= 0x40 || (t->state == STATE_ESC_INTERMEDIATE && c >= 0x30))
                                t->state = STATE_TEXT;
                        return true;
                }
                t->state = STATE_TEXT;
                return false;
        case STATE_STRING:
                if (c == BEL)
                        t->state = STATE_TEXT;
                else if (c == ESC)
                        t->state = STATE_STRING_ESC;
                else if (c == '\n') {
                        t->state = STATE_TEXT;
                        return false;
                }
                return true;
        case STATE_STRING_ESC:
                if (c == '\\') {
                        t->state = STATE_TEXT;
                        return true;
                }
                /* Not ST: that ESC starts a sequence of its own. */
                t->state = STATE_ESC;
                return sequence_byte(t, c);
        }
        return false;
}

size_t terminal_text_feed(TerminalText *t, const void *in, size_t n, char *out) {
        const unsigned char *p = in;
        size_t w = 0;

        for (size_t i = 0; i < n; i++) {
                if (t->state != STATE_TEXT && sequence_byte(t, p[i]))
                        continue;
                w += text_byte(t, p[i], out + w);
        }
        return w;
}

size_t terminal_text_flush(TerminalText *t, char *out) {
        return take_line(t, out);
}
