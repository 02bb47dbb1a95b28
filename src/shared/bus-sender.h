/* SPDX-License-Identifier: MIT */
#pragma once

/* Who sent a message, as only the bus daemon can vouch for it.
 *
 * The bus daemon stamps every message's sender with the unique name of the
 * connection that sent it; its own messages carry "org.freedesktop.DBus",
 * which no client can own. Two things it does not do:
 *  - a match rule's sender= does not filter a unicast signal: the daemon
 *    delivers a signal addressed to a connection whatever that connection's
 *    rules say, and sd-bus matches sender='some.well.Known' against any
 *    unique name, since it cannot know who owns the well-known one;
 *  - nobody stamps anything on a direct connection (bgrund --listen): there
 *    the sender field is whatever the peer wrote.
 * So a handler of a signal checks the sender itself, with these. (GLib had
 * the same class of fault as CVE-2024-34397.) */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#define BUS_DRIVER_NAME "org.freedesktop.DBus"

/* m came from the bus daemon itself (NameOwnerChanged, NameLost, ...). */
bool bus_message_from_driver(sd_bus_message *m);

/* The current unique owner of a well-known name, followed through the
 * daemon's own NameOwnerChanged: a service's signals are believed only from
 * the connection that owns its name now (a restarted or re-executed service
 * owns it under a new unique name). */
typedef struct BusNameOwner {
        sd_bus *bus;
        char *name;
        char *owner;        /* NULL: no owner, or not known yet */
        sd_bus_slot *match; /* NameOwnerChanged of name, from the daemon */
        sd_bus_slot *query; /* GetNameOwner, until answered */
        /* Told after each change of owner the daemon announced (a service
         * restarted: what it was asked to remember, it has forgotten). */
        void (*changed)(void *userdata);
        void *userdata;
} BusNameOwner;

/* Starts following name's owner on bus: the match goes out first, then the
 * question, and the daemon handles them in that order, so no change falls
 * between the two. Nothing waits: until the answer is in, no signal is
 * believed (a caller sends its first call to the service after this, and
 * the answer is queued before any signal that call can cause). */
int bus_name_owner_watch(BusNameOwner *o, sd_bus *bus, const char *name);
/* The same, with changed(userdata) told of each new owner. */
int bus_name_owner_watch_full(BusNameOwner *o, sd_bus *bus, const char *name, void (*changed)(void *userdata),
                              void *userdata);

/* m was sent by the name's current owner. On a connection to the service
 * itself (no bus daemon in between), everything on it comes from it. */
bool bus_name_owner_sent(const BusNameOwner *o, sd_bus_message *m);

void bus_name_owner_done(BusNameOwner *o);
