/* SPDX-License-Identifier: MIT */
#pragma once

/* Where bgrun reached for bgrund, and whether a failure means that nobody
 * is there: what the connection (connection.c), the check of a missing
 * bgrund (daemon-check.c) and the words of a failed call (call-error.c)
 * all ask, kept below the three of them. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef enum BusReached {
        REACHED_SYSTEM_BUS,
        REACHED_USER_BUS,
        REACHED_REMOTE,
        REACHED_BUS_ADDRESS,  /* a bus at an address given */
        REACHED_LISTEN,       /* a bgrund --listen socket, or nothing at all */
} BusReached;

/* *ret_where (if not NULL): the host or the address, NULL on a local bus. */
BusReached bus_reached(const char **ret_where);
/* Where the connection being made reaches; where: kept, not copied. */
void bus_reached_set(BusReached reached, const char *where);

/* Nobody owns bgrund's name, and the bus could not start it. */
bool bus_error_means_daemon_missing(const sd_bus_error *error);

/* A connection that nobody answers, or that went. */
bool errno_means_nobody_there(int r);
