/* SPDX-License-Identifier: MIT */
#pragma once

/* What a client library asks the bus daemon as it connects, answered on a
 * --listen connection as a bus daemon would, on org.freedesktop.DBus at
 * /org/freedesktop/DBus, so that dbus-next, GDBus and sd-bus in bus mode
 * work unchanged:
 *   Hello          the connection's unique name, ":p2p.N" (N from 1; the
 *                  name bgrund knows it by, never one of the system bus's)
 *   GetNameOwner   of org.bgrun.Runtime1: BUS_LISTEN_OWNER, the sender of
 *                  every message bgrund sends on the connection (a proxy
 *                  of dbus-next or GDBus takes a signal only from the
 *                  name's owner); of org.freedesktop.DBus itself, and of
 *                  the caller's own name, as a bus daemon; of any other
 *                  name, org.freedesktop.DBus.Error.NameHasNoOwner
 *   NameHasOwner   true for those same names
 *   AddMatch, RemoveMatch
 *                  accepted and counted (BUS_LISTEN_MATCH_RULES_MAX per
 *                  connection; RemoveMatch of a rule not added is
 *                  MatchRuleNotFound), and select nothing: bgrund sends a
 *                  connection the signals it Subscribed to, whatever its
 *                  match rules say, as on the bus, where bgrund sends each
 *                  subscriber its signals, addressed to it alone
 *   GetId          the server's guid, as in the AUTH handshake's "OK"
 * Any other method of org.freedesktop.DBus gets UnknownMethod, naming the
 * ones answered. */

#include "listen-connection.h"

#define BUS_LISTEN_OWNER ":p2p.0"

/* Serve those methods on c's bus, and set its messages' sender. */
int listen_bus_daemon_attach(ListenConnection *c);
/* What c holds for them (its match rules). */
void listen_bus_daemon_detach(ListenConnection *c);
