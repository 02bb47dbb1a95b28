/* SPDX-License-Identifier: MIT */
#pragma once

/* The error table (errors.h) on the bus, for bgrund and its clients alike:
 * each D-Bus error's whole name, the map sd-bus learns of them (keyed by
 * bgrun's codes: sd_bus_error_get_errno() of one of them answers
 * BGRUN_ERROR_BASE + its code), an answer set from a code, and the row of
 * an error a client got. */

#include <systemd/sd-bus.h>

#include "errors.h"
#include "macro.h"

/* Every error of ours is this and its word. */
#define BUS_ERROR_PREFIX "org.bgrun.Runtime1.Error."

/* The whole D-Bus name of code's kind ("org.bgrun.Runtime1.Error.NoSuchJob";
 * InvalidArgs is org.freedesktop.DBus's); NULL for no code of the table. */
const char *bus_error_name(BgrunErrorCode code);

/* Let sd-bus know the names (once, before the first call): 0, or a
 * negative errno. */
int bus_errors_register(void);

/* e set from r: one of bgrun's codes (BGRUN_ERROR()) as its D-Bus error,
 * any other -errno as sd-bus names it; the message from format. Returns
 * what sd_bus_error_set*() return: r's errno, negative. */
_printf_(3, 4) int bus_error_set(sd_bus_error *e, int r, const char *format, ...);

/* The row of the error e carries (one of bgrun's, or sd-bus's own
 * AccessDenied and InvalidArgs, which are the same to a client); NULL when
 * it is none of them. */
const BgrunErrorInfo *bus_error_info(const sd_bus_error *e);
