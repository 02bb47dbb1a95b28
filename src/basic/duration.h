/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Parse a systemd-style time span into microseconds: "90" (seconds), "90s",
 * "500ms", "5min", "1h30min", "2d", "1.5s", whitespace between parts allowed.
 * Units: us/usec, ms/msec, s/sec/second(s), m/min/minute(s), h/hr/hour(s),
 * d/day(s), w/week(s). Returns 0, or -EINVAL on a malformed string and
 * -ERANGE on overflow. *ret is written only on success. */
int parse_duration_usec(const char *s, uint64_t *ret);

/* Room for any time span format_duration() prints, UINT64_MAX µs included. */
#define FORMAT_DURATION_MAX 64

/* Format microseconds the way systemd prints a time span ("1h 30min",
 * "1.500s", "0"); always NUL-terminates; returns buf. */
char *format_duration(char *buf, size_t len, uint64_t usec);
