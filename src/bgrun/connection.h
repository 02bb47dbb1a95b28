/* SPDX-License-Identifier: MIT */
#pragma once

/* The connection to bgrund: where it is reached (the system or the user bus,
 * another host's through ssh, any address, bgrund --listen's default socket)
 * and who the caller is there. */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "reach.h"

/* Where bgrund is reached: --system (the default), --user, -H HOST or
 * --address ADDRESS. */
typedef enum BusTransport {
        BUS_TRANSPORT_SYSTEM,
        BUS_TRANSPORT_USER,
} BusTransport;

typedef struct BusTarget {
        BusTransport transport;
        bool transport_given;   /* --user or --system on the command line */
        const char *host;       /* -H [USER@]HOST: the system bus there, through ssh */
        const char *address;    /* --address: any D-Bus address, a bus or bgrund --listen */
} BusTarget;


/* Connects to bgrund as target says; with neither -H nor --address,
 * $BGRUN_ADDRESS (or the older $BGRUN_BUS_ADDRESS) unless --user/--system
 * was given; with no bus at all, the default socket of bgrund --listen. */
int bus_connect(const BusTarget *target, sd_bus **ret);

/* Closes and unrefs bus, flushing what it has to send first if it is set
 * up (never waiting for a setup that does not come). Returns NULL. */
sd_bus *bus_close(sd_bus *bus);
static inline void bus_closep(sd_bus **bus) {
        bus_close(*bus);
}

/* The uid bgrund takes this connection's calls to come from. */
int bus_caller_uid(sd_bus *bus, uid_t *ret);

/* The target connected to: -H sends nothing of the local environment. */
bool bus_target_is_remote(const BusTarget *target);
