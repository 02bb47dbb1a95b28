/* SPDX-License-Identifier: MIT */
/* The deadline of every call to bgrund, set once from the command line. */

#include "deadline.h"

static uint64_t deadline = CALL_DEADLINE_DEFAULT_USEC;

uint64_t call_deadline_usec(void) {
        return deadline;
}

void call_deadline_set(uint64_t usec) {
        deadline = usec > 0 ? usec : CALL_DEADLINE_DEFAULT_USEC;
}

/* A ping a tenth of the deadline after the last answer, each given the
 * whole deadline: a bgrund that stops is given up on no sooner than the
 * deadline the message names after it stopped, and at most a tenth later
 * (issue #36, row 8: with a quarter and a half, a 3 s deadline gave up
 * 2.26 s after the stop). A Ping costs bgrund a few microseconds. */
uint64_t call_ping_interval_usec(void) {
        return deadline / 10 ?: 1;
}

uint64_t call_ping_timeout_usec(void) {
        return deadline;
}
