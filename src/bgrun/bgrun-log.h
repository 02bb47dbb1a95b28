/* SPDX-License-Identifier: MIT */
#pragma once

/* The messages of bgrun: always exactly one line on stderr, prefixed
 * "bgrun: ". */

#include "macro.h"

void log_error(const char *format, ...) _printf_(1, 2);

/* Logs with errno set from error, so that %m works; returns -|error|. */
int log_error_errno(int error, const char *format, ...) _printf_(2, 3);

/* For a mistake on the command line; returns -EINVAL. */
int log_usage_error(const char *format, ...) _printf_(1, 2);

int log_oom(void);
