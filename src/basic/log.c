/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static const char *program = "bgrun";
static int max_level = LOG_LEVEL_INFO;

void log_set_program(const char *name) {
        program = name;
}

void log_parse_environment(void) {
        /* The variable systemd's own tools honour, for the same purpose. */
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

        /* "<N>" prefixes are understood by journald for stderr streams. */
        if (getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>", level);
        else
                fprintf(stderr, "%s: ", program);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);

        errno = saved;
        return error;
}
