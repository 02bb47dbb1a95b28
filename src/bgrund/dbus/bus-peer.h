/* SPDX-License-Identifier: MIT */
#pragma once

/* Connections without a bus daemon: bgrund --listen's (listen/), whose
 * peer is the socket's and whose sender field is empty. The face knows
 * their server only by this table, kept in BusService, which the server sets
 * when it starts to serve, so the face includes nothing of listen/ and
 * listen/ builds on it. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

typedef struct BusService BusService;

typedef struct BusPeerServer {
        /* bus's peer if bus is one of the server's connections: its uid and
         * pid, and the name it is known by; -ENXIO if it is not. */
        int (*peer)(void *server, sd_bus *bus, uid_t *ret_uid, pid_t *ret_pid, const char **ret_name);
        /* Whether bgrund may send bus one more message (see bus_peer_may_send). */
        bool (*may_send)(void *server, sd_bus *bus);
        /* Stops serving and frees server; the table is unset by then. */
        void (*free)(void *server);
} BusPeerServer;

/* Set the one peer-to-peer server; -EBUSY if there is one already. */
int bus_peer_server_set(BusService *s, const BusPeerServer *ops, void *server);
/* Unset it if it is server (its free calls this). */
void bus_peer_server_unset(BusService *s, void *server);
/* Free the server, if any (bgrund's shutdown, where the face lets go of its
 * connections). */
void bus_peer_server_free(BusService *s);

/* What the peer-to-peer server names its connections (":p2p.N", N from
 * 1; ":p2p.0" is bgrund itself): never a name on the bus. */
#define BUS_PEER_NAME_PREFIX ":p2p."

/* The peer of bus if it is a peer-to-peer connection of bgrund's: its uid
 * and pid from SO_PEERCRED, and its name (":p2p.N"). -ENXIO if not. */
int bus_peer(BusService *s, sd_bus *bus, uid_t *ret_uid, pid_t *ret_pid, const char **ret_name);
/* The name of m's caller: on bgrund's own peer-to-peer connection the one
 * bgrund gave it, whatever the message's sender field says (nobody stamps
 * it there); on the bus the unique name the bus daemon stamped. NULL if
 * there is none. Every handler learns who called from here. */
const char *bus_caller_name(BusService *s, sd_bus_message *m);
/* Whether bgrund may send one more message (a signal) on bus: false for a
 * peer-to-peer connection that left too much unread, which is then dropped
 * (soon, not now: its caller may be walking a list of connections). True for
 * any other bus. */
bool bus_peer_may_send(BusService *s, sd_bus *bus);
