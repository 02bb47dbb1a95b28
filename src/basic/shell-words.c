/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "shell-words.h"

bool shell_word_is_plain(const char *w) {
        if (!*w)
                return false;
        for (const char *p = w; *p; p++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *p))
                        return false;
        return true;
}

char *shell_quote_words(char *const *words) {
        /* The worst case: every byte a ', four bytes each, two quotes and a
         * space per word. */
        size_t len = 1;
        for (char *const *w = words; *w; w++)
                len += 4 * strlen(*w) + 3;
        char *s = malloc(len), *p = s;
        if (!s)
                return NULL;
        for (char *const *w = words; *w; w++) {
                if (w != words)
                        *p++ = ' ';
                if (shell_word_is_plain(*w)) {
                        p = stpcpy(p, *w);
                        continue;
                }
                *p++ = '\'';
                for (const char *c = *w; *c; c++)
                        if (*c == '\'')
                                p = stpcpy(p, "'\\''");
                        else
                                *p++ = *c;
                *p++ = '\'';
        }
        *p = '\0';
        return s;
}
