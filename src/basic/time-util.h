/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* Microseconds on CLOCK_REALTIME (what records carry) and CLOCK_MONOTONIC
 * (what timeouts are measured on). */
uint64_t now_realtime_usec(void);
uint64_t now_monotonic_usec(void);
