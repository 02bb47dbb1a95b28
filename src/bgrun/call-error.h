/* SPDX-License-Identifier: MIT */
#pragma once

/* Why a call failed, told in one line that says what the user can do about
 * it: the one place where a D-Bus error is classified and logged. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "errors.h"
#include "macro.h"

/* The exit status for a call that failed with error (or, without one, the
 * errno r): NoSuchJob, InvalidArgs, ... each its own (exit-status.h). */
BgrunExit exit_code_for_error(const sd_bus_error *error, int r);

/* The error's last name for --json ("NoSuchJob"); an errno without a D-Bus
 * error is named as sd-bus names its own ("NoReply" for a timeout,
 * "Disconnected", "Failed"). */
const char *bus_error_last_name(const sd_bus_error *error, int r);

/* The failure that ends bgrun: logs the line and keeps (the first one told)
 * its exit status, name and line for main() and --json. Returns r, or -EIO
 * if r is not negative. */
int call_failure(int exit_code, const char *name, int r, const char *format, ...) _printf_(4, 5);
/* The same for a failure said already in a line of its own. */
void call_failure_record(int exit_code, const char *name, const char *message);
/* The exit status of the failure told, 0 if none was. */
int call_failure_exit_code(void);
/* {"error": NAME, "message": LINE} on stdout: the failure told, or for r
 * if none was. */
int call_failure_print_json(int r);

/* One line for a failed method call (none if why bgrund cannot start was
 * said already). id may be NULL if the call is not about one job. Returns r
 * (negative). */
int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r);

/* One line for a reply that does not read as it should. Returns r. */
int log_parse_error(const char *method, int r);

/* The line that says bgrund is not there, and how to start it (a failure
 * of BGRUN_EXIT_UNREACHABLE named name). Returns r. */
int log_daemon_missing_as(const char *name, int r);
void log_daemon_missing(void);
/* One line for a remote host (-H) that could not be reached; returns r. */
int log_remote_unreachable(const char *host, int r);

