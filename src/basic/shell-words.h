/* SPDX-License-Identifier: MIT */
#pragma once

/* Words written so that /bin/sh reads them back exactly: how a program and
 * its arguments (Launch's Argv) are shown as one command line. */

#include <stdbool.h>

/* A word the shell reads as itself, with no quoting. */
bool shell_word_is_plain(const char *w);

/* The words joined by spaces, each quoted for /bin/sh where it needs it
 * (single quotes, a ' as '\''; an empty word as ''). NULL: out of memory. */
char *shell_quote_words(char *const *words);
