/* SPDX-License-Identifier: MIT */
#pragma once

/* notifications/progress of a waiting call that carries a progressToken
 * (run, wait, output with wait_sec): progress is the seconds waited, which
 * grow with every notification, as MCP requires; message the output bytes
 * so far and the job's last complete line (at most MCP_PROGRESS_LINE_MAX
 * characters, cleaned as logs --plain cleans a terminal's output), so that
 * a person sees where a build is. Sent when the output grew (at most once
 * a PROGRESS_SOON_USEC) and at least every PROGRESS_EVERY_USEC. */

#include "mcp-call.h"

/* A notification for grown output at most once this often: each look at
 * the record (PROGRESS_INTERVAL_USEC) may send one. */
#define PROGRESS_SOON_USEC PROGRESS_INTERVAL_USEC
#define PROGRESS_EVERY_USEC (10 * USEC_PER_SEC)
/* The output read back for the last line: its end, this much at most. */
#define PROGRESS_TAIL_BYTES 2048

/* With c's record just read: a notification if one is due (reading the
 * output's end first when it grew), then next(c, NULL). */
int mcp_progress(McpCall *c, McpStep next);

/* The last complete line of text[0..n) (output's end: its first line may be
 * cut), cleaned of what made a terminal draw it, at most MCP_PROGRESS_LINE_MAX
 * characters (cut at a UTF-8 character's end), into buf (size >
 * 4 * MCP_PROGRESS_LINE_MAX); "" when there is none. Pure. */
void mcp_progress_last_line(const void *text, size_t n, char *buf, size_t size);
