/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static const char *program = "bgrun";
static LogTarget target = LOG_TARGET_AUTO;
static int max_level = LOG_LEVEL_INFO;

void log_setup(const char *name, LogTarget t) {
        program = name;
        target = t;
        const char *e = getenv("SYSTEMD_LOG_LEVEL");
        if (e && (streq(e, "debug") || streq(e, "7")))
                max_level = LOG_LEVEL_DEBUG;
}

int log_internal(int level, int error, const char *fmt, ...) {
        if (error > 0)
                error = -error;
        if (level > max_level)
                return error;

        int saved = errno;
        if (error < 0)
                errno = -error; /* so that %m names the error we were given */

        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *line = NULL;
        int n = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (n < 0) {
                errno = saved;
                return error;
        }
        for (char *p = line; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f)
                        *p = ' ';

        /* "<N>" prefixes are understood by journald for stderr streams. */
        if (target == LOG_TARGET_AUTO && getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>%s\n", level, line);
        else
                fprintf(stderr, "%s: %s\n", program, line);

        errno = saved;
        return error;
}
