/* SPDX-License-Identifier: MIT */
#include <sys/types.h>

#include "chunked.h"

enum {
        SIZE,       /* hex digits of the chunk size */
        EXTENSION,  /* after them: ;ext..., up to CR */
        SIZE_LF,    /* the LF after the size line's CR */
        DATA,       /* left bytes of data */
        DATA_CR,    /* the CRLF after the data */
        DATA_LF,
        TRAILER,    /* trailer lines, up to an empty one */
        TRAILER_LF,
        DONE,
};

#define LINE_MAX_BYTES 4096

static int hex(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

ssize_t chunked_feed(Chunked *c, const char *buf, size_t len, bool *ret_done) {
        size_t i = 0;
        *ret_done = false;
        while (i < len && c->state != DONE) {
                char ch = buf[i];
                switch (c->state) {
                case SIZE:
                        if (hex(ch) >= 0 && c->digits < 15) {
                                c->left = c->left * 16 + (uint64_t) hex(ch);
                                c->digits++;
                        } else if (c->digits > 0 && (ch == ';' || ch == '\r' || ch == ' ' || ch == '\t')) {
                                c->state = ch == '\r' ? SIZE_LF : EXTENSION;
                        } else
                                return -1;
                        i++;
                        break;
                case EXTENSION:
                        if (ch == '\r')
                                c->state = SIZE_LF;
                        else if (ch == '\n' || (unsigned char) ch < ' ' || ++c->line > LINE_MAX_BYTES)
                                return -1;
                        i++;
                        break;
                case SIZE_LF:
                        if (ch != '\n')
                                return -1;
                        c->state = c->left ? DATA : TRAILER;
                        c->line = 0;
                        c->trailer_empty = true;
                        i++;
                        break;
                case DATA: {
                        size_t take = len - i < c->left ? len - i : (size_t) c->left;
                        c->left -= take;
                        i += take;
                        if (c->left == 0)
                                c->state = DATA_CR;
                        break;
                }
                case DATA_CR:
                        if (ch != '\r')
                                return -1;
                        c->state = DATA_LF;
                        i++;
                        break;
                case DATA_LF:
                        if (ch != '\n')
                                return -1;
                        *c = (Chunked) { .state = SIZE };
                        i++;
                        break;
                case TRAILER:
                        if (ch == '\r')
                                c->state = TRAILER_LF;
                        else if (ch == '\n' || ch == '\0' || ++c->line > LINE_MAX_BYTES)
                                return -1;
                        else
                                c->trailer_empty = false;
                        i++;
                        break;
                case TRAILER_LF:
                        if (ch != '\n')
                                return -1;
                        i++;
                        if (c->trailer_empty)
                                c->state = DONE;
                        else {
                                c->state = TRAILER;
                                c->line = 0;
                                c->trailer_empty = true;
                        }
                        break;
                }
        }
        *ret_done = c->state == DONE;
        return (ssize_t) i;
}
