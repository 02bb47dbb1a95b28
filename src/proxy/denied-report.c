/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "denied-report.h"
#include "domain-list.h"
#include "log.h"
#include "macro.h"

void denied_report(int report_fd, const char *host) {
        char line[DOMAIN_NAME_MAX + 4];
        if (report_fd < 0)
                return;
        int n = snprintf(line, sizeof line, "D %s\n", host ?: "(invalid)");
        if (write(report_fd, line, (size_t) n) < 0 && errno != EAGAIN)
                log_debug_errno(negative_errno(), "Cannot report a refused host: %m");
}
