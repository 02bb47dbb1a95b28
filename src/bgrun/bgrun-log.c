/* SPDX-License-Identifier: MIT */
/* The messages of bgrun on stderr, one line each. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "bgrun-log.h"
#include "macro.h"

static void log_vline(const char *format, va_list ap) {
        _cleanup_free_ char *line = NULL;

        if (vasprintf(&line, format, ap) < 0) {
                fputs("bgrun: Out of memory.\n", stderr);
                return;
        }

        /* The daemon's messages are passed on; keep them to one line. */
        for (char *p = line; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f)
                        *p = ' ';

        fprintf(stderr, "bgrun: %s\n", line);
}

void log_error(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        log_vline(format, ap);
        va_end(ap);
}

int log_error_errno(int error, const char *format, ...) {
        va_list ap;

        error = error < 0 ? -error : error;
        errno = error;
        va_start(ap, format);
        log_vline(format, ap);
        va_end(ap);
        return -error;
}

int log_usage_error(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        log_vline(format, ap);
        va_end(ap);
        return -EINVAL;
}

int log_oom(void) {
        return log_error_errno(ENOMEM, "Out of memory.");
}
