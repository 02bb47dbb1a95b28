/* SPDX-License-Identifier: MIT */
#pragma once

/* Every call to bgrund has a deadline (--call-timeout, BGRUN_CALL_TIMEOUT,
 * default 30 s): a bgrund that stopped answering (SIGSTOPped, wedged) makes
 * bgrun exit with BGRUN_EXIT_UNREACHABLE within it, never hang. Calls that
 * wait for a job (Wait) wait as long as asked, and meanwhile ping bgrund so
 * that they too notice within the deadline. */

#include <stdint.h>

#include "macro.h"

#define CALL_DEADLINE_DEFAULT_USEC (30 * USEC_PER_SEC)

uint64_t call_deadline_usec(void);
void call_deadline_set(uint64_t usec);

/* While a long call (one that waits in bgrund) is unanswered: a Peer.Ping
 * goes out after this long without an answer, and again as long as the
 * call waits; a ping unanswered after call_ping_timeout_usec() means bgrund
 * is not answering. A bgrund that stopped is so found out between the
 * deadline and the deadline and an interval after it stopped. */
uint64_t call_ping_interval_usec(void);
uint64_t call_ping_timeout_usec(void);
