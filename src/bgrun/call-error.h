/* SPDX-License-Identifier: MIT */
#pragma once

/* Why a call failed, told in one line that says what the user can do about
 * it: the one place where a D-Bus error is classified and logged. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

/* One line for a failed method call (none if why bgrund cannot start was
 * said already). id may be NULL if the call is not about one job. Returns r
 * (negative). */
int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r);

/* The reason of an access-denied error's message, without the "Request
 * authority denied: " or "Access denied: " it may begin with (a pointer into
 * message), so that "Access denied: " is not said twice. */
const char *access_denied_reason(const char *message);

/* One line for a reply that does not read as it should. Returns r. */
int log_parse_error(const char *method, int r);

/* The line that says bgrund is not there, and how to start it. */
void log_daemon_missing(void);
/* One line for a remote host (-H) that could not be reached; returns r. */
int log_remote_unreachable(const char *host, int r);

/* Nobody owns bgrund's name, and the bus could not start it. */
bool bus_error_means_daemon_missing(const sd_bus_error *error);

/* A connection that nobody answers, or that went. */
bool errno_means_nobody_there(int r);
