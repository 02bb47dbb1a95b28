/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "error-text.h"

int error_text(int error, char **ret, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int k = vasprintf(ret, fmt, ap);
        va_end(ap);
        if (k < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return error;
}
