/* SPDX-License-Identifier: MIT */
#pragma once

#include "macro.h"

/* A refusal with the words for its caller: *ret (malloc'd) says what fmt
 * says; returns error, or -ENOMEM (*ret NULL) when there is no room for
 * the words. */
int error_text(int error, char **ret, const char *fmt, ...) _printf_(3, 4);
