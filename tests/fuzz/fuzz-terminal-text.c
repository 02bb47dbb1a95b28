/* SPDX-License-Identifier: MIT */
/* terminal-text.c, the plain text of a terminal's output (logs --plain).
 *
 * Input: one byte, where to cut the rest in two (its share of 256), then
 * the output to filter. Checked: fed whole, cut in two and byte by byte,
 * the text is the same; a feed writes no more than it may
 * (TERMINAL_TEXT_OUT_MAX); the text is never longer than the input, has no
 * more line ends, and holds no ESC, no DEL and no C0 control but LF and TAB. */
#include "fuzz.h"
#include "terminal-text.h"

static TerminalText t;

/* Feeds data in pieces of piece bytes (a first one of first bytes), then
 * flushes; returns the text (size_t length in *ret_len). */
static char *filter(const uint8_t *data, size_t size, size_t first, size_t piece, size_t *ret_len) {
        char *out = malloc(TERMINAL_TEXT_OUT_MAX(size) + 1);
        FUZZ_CHECK(out, "malloc");
        size_t w = 0;
        terminal_text_init(&t);
        for (size_t i = 0; i < size;) {
                size_t n = i == 0 && first > 0 ? first : piece;
                if (n > size - i)
                        n = size - i;
                size_t held = t.line_len;
                size_t k = terminal_text_feed(&t, data + i, n, out + w);
                FUZZ_CHECK(k <= held + n, "a feed of %zu with %zu held wrote %zu", n, held, k);
                w += k;
                i += n;
        }
        w += terminal_text_flush(&t, out + w);
        FUZZ_CHECK(t.line_len == 0, "a line still held after the flush");
        *ret_len = w;
        return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        size_t cut = (size - 1) * data[0] / 256;
        data++;
        size--;

        size_t len, len_cut, len_bytes;
        char *whole = filter(data, size, size, size, &len);
        char *in_two = filter(data, size, cut, size, &len_cut);
        char *bytes = filter(data, size, 1, 1, &len_bytes);
        FUZZ_CHECK(len == len_cut && memcmp(whole, in_two, len) == 0, "cut at %zu, the text differs", cut);
        FUZZ_CHECK(len == len_bytes && memcmp(whole, bytes, len) == 0, "byte by byte, the text differs");

        FUZZ_CHECK(len <= size, "%zu bytes of text from %zu", len, size);
        size_t lf_in = 0, lf_out = 0;
        for (size_t i = 0; i < size; i++)
                lf_in += data[i] == '\n';
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) whole[i];
                lf_out += c == '\n';
                FUZZ_CHECK(c >= 0x20 || c == '\n' || c == '\t', "control 0x%02x at %zu", c, i);
                FUZZ_CHECK(c != 0x7f, "DEL at %zu", i);
        }
        FUZZ_CHECK(lf_out <= lf_in, "%zu line ends from %zu", lf_out, lf_in);
        free(whole);
        free(in_two);
        free(bytes);
        return 0;
}
