/* SPDX-License-Identifier: MIT */
#pragma once

/* The callers' connections, and the one place their departures are learnt:
 * one NameOwnerChanged match for every connection on the bus (as
 * sd_bus_track would have one a name, and a bus daemon allows a connection
 * only so many match rules), believed only from the bus daemon; a --listen
 * connection's end is told by bus-listen.c. A departure takes with it,
 * here and only here, all that bgrund held for the connection: its record
 * in the registry of callers (bus-client.c) with its identity, its waiting
 * calls, its subscription and its bound jobs, stopped; and the authority
 * (bus-authority.c) knows the name gone, so a call of it still queued is
 * dropped. */

#include <stdbool.h>

#include "bus-service.h"

/* Add the match, asynchronously, before the name is requested (so that no
 * caller can call before it is in place). */
int bus_callers_start(BusService *s);
/* Whether departures on the bus are seen: false once the match failed.
 * Whatever must go with its caller (a held call, a subscription, a bound
 * job) is refused then, never kept for ever. (Inline: what asks it is what
 * a departure reaches.) */
static inline bool bus_callers_watched(const BusService *s) {
        return s->callers_match && !s->callers_match_failed;
}
/* The connection of that unique name left. */
void bus_caller_gone(BusService *s, const char *name);
void bus_callers_free(BusService *s);
