/* SPDX-License-Identifier: MIT */
#pragma once

/* Logging for the programs' entry points. Library code does not log above
 * debug; it returns -errno and lets its caller say what failed. Output goes to
 * stderr, which systemd hands to the journal with the unit's name. */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>

#include "macro.h"

enum { LOG_LEVEL_ERR = 3, LOG_LEVEL_WARNING = 4, LOG_LEVEL_INFO = 6, LOG_LEVEL_DEBUG = 7 };

void log_set_program(const char *name);
/* SYSTEMD_LOG_LEVEL=debug turns on debug messages. */
void log_parse_environment(void);

/* Prints the message with %m expanded for -error, and returns error (which is
 * normalised to be negative), so callers can `return log_error_errno(r, …)`. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error(...) ((void) log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__))
#define log_warning(...) ((void) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__))
#define log_info(...) ((void) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__))
#define log_debug(...) ((void) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__))
