/* SPDX-License-Identifier: MIT */
#include <time.h>

#include "macro.h"
#include "time-util.h"

static uint64_t clock_usec(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

uint64_t now_realtime_usec(void) {
        return clock_usec(CLOCK_REALTIME);
}

uint64_t now_monotonic_usec(void) {
        return clock_usec(CLOCK_MONOTONIC);
}
