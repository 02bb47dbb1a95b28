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

/* A quarter, then half of the deadline for its answer: a bgrund that stops
 * right after answering one ping is found out 3/4 of the deadline later. */
uint64_t call_ping_interval_usec(void) {
        return deadline / 4 ?: 1;
}

uint64_t call_ping_timeout_usec(void) {
        return deadline / 2 ?: 1;
}
