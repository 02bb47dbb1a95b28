/* SPDX-License-Identifier: MIT */
#pragma once

/* A refused host, to the supervisor (its report pipe, non-blocking), which
 * keeps the record's network_denied: "D HOST\n" ("(invalid)" for a request
 * that names none); dropped when the pipe is full, as the supervisor reads
 * at its own pace. */
void denied_report(int report_fd, const char *host);
