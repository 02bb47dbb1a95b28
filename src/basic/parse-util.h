/* SPDX-License-Identifier: MIT */
#pragma once

/* Parsers for the values of bgrun's options. Each returns 0, -EINVAL on a
 * malformed value or -ERANGE on overflow; *ret is written only on success. */

#include <stdint.h>
#include <sys/types.h>

/* Decimal digits only. With ret_end, stops at the first other character and
 * points there; without, the whole string must be the number. */
int parse_uint64_strict(const char *s, uint64_t *ret, const char **ret_end);

/* "1024", "512K", "1G" (base 1024), or "infinity". */
int parse_size_bytes(const char *s, uint64_t *ret);

/* "50%" is half a CPU: 500000 µs per second. Up to four decimals ("12.5%")
 * are exact, since 1% is 10000 µs. */
int parse_cpu_percent(const char *s, uint64_t *ret);

/* A file descriptor number (0 to INT_MAX) and a process id (1 to INT_MAX),
 * in decimal digits only: what bgrund passes its supervisor. */
int parse_fd(const char *s, int *ret);
int parse_pid(const char *s, pid_t *ret);

/* A signal by name (TERM, SIGTERM; any case) or number (1 to NSIG - 1);
 * -EINVAL if none. Returns the signal. */
int parse_signal(const char *s);
