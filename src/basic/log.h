/* SPDX-License-Identifier: MIT */
#pragma once

/* One logging API for all three programs. Library code does not log above
 * debug; it returns -errno and lets the entry point say what failed, once.
 *
 * Every message is one line on stderr (control characters become spaces, so
 * text that came from elsewhere cannot forge a second line):
 *   LOG_TARGET_AUTO     "<N>message" when stderr is the journal (systemd
 *                       passes JOURNAL_STREAM), else "program: message";
 *                       for bgrund and the supervisor
 *   LOG_TARGET_CONSOLE  always "program: message"; for the command line
 * Where stderr is the service's journal stream (JOURNAL_STREAM names it),
 * messages go to journald's native socket instead, as structured entries:
 * PRIORITY, SYSLOG_IDENTIFIER, MESSAGE, ERRNO and the caller's fields. */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

enum { LOG_LEVEL_ERR = 3, LOG_LEVEL_WARNING = 4, LOG_LEVEL_INFO = 6, LOG_LEVEL_DEBUG = 7 };

typedef enum LogTarget {
        LOG_TARGET_AUTO,
        LOG_TARGET_CONSOLE,
} LogTarget;

/* The program's name in messages, and where they go. SYSTEMD_LOG_LEVEL=debug
 * (the variable systemd's own tools honour) turns on debug messages. */
void log_setup(const char *program, LogTarget target);

/* One field of a structured entry: NAME is journald's (A-Z, 0-9, '_'; not
 * starting with '_'), a NULL value leaves the field out. Fields reach the
 * journal only; a line on stderr carries the message alone. */
typedef struct LogField {
        const char *name;
        const char *value;
} LogField;

/* Logs the message with %m expanded for -error, and returns error (which is
 * normalised to be negative), so callers can `return log_error_errno(r, …)`. */
int log_struct_internal(int level, int error, const LogField *fields, size_t n_fields, const char *fmt, ...)
        _printf_(5, 6);
#define log_internal(level, error, ...) log_struct_internal((level), (error), NULL, 0, __VA_ARGS__)
#define log_struct(level, fields, ...) \
        ((void) log_struct_internal((level), 0, (fields), ELEMENTSOF(fields), __VA_ARGS__))

/* The journal's socket; log_setup() opens journald's own when stderr is the
 * journal. For tests: any datagram socket. */
int log_open_journal(const char *socket_path);
void log_close_journal(void);

#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error(...) ((void) log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__))
#define log_warning(...) ((void) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__))
#define log_info(...) ((void) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__))
#define log_info_errno(e, ...) log_internal(LOG_LEVEL_INFO, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
#define log_debug(...) ((void) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__))

/* For the command line: a usage mistake (-EINVAL), and out of memory. */
#define log_usage_error(...) log_internal(LOG_LEVEL_ERR, -EINVAL, __VA_ARGS__)
#define log_oom() log_internal(LOG_LEVEL_ERR, -ENOMEM, "Out of memory.")
