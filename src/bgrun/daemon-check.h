/* SPDX-License-Identifier: MIT */
#pragma once

/* The diagnosis of a bgrund that cannot start: while a call waits for a
 * bgrund the bus is starting, the service manager is asked how
 * bgrund.service is doing, so that one that cannot start is said at once,
 * with the reason, rather than after the bus' activation timeout. Only on a
 * bus with a service manager (the system or the user bus). */

#include <stdbool.h>
#include <systemd/sd-bus.h>

/* Asks the bus whether bgrund is there (NameHasOwner, sent with the first
 * call, never awaited on its own). */
int daemon_check_start(sd_bus *bus);

/* bgrund was not there when the first call went out: the wait for an answer
 * looks at bgrund.service with daemon_check_step(). */
bool daemon_check_waiting(void);

/* One look at bgrund.service while a call waits: -ENOTCONN once it is known
 * not to come (and said), else 0. */
int daemon_check_step(sd_bus *bus);

/* A call was answered with error (NULL: success). */
void daemon_check_answered(const sd_bus_error *error);

/* A call answered that bgrund is missing while it was not there before: if
 * its configuration says why, that is said and -ENOTCONN returned; else 0. */
int daemon_check_failed_call(const sd_bus_error *error);

/* Why bgrund cannot start was said: nothing more to say. */
bool daemon_check_reported(void);
/* What was said then (NULL: nothing), which --json's error carries too. */
const char *daemon_check_said(void);
