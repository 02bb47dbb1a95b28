/* SPDX-License-Identifier: MIT */
#pragma once

/* The registry of callers' connections, as sd_bus_track has them: one
 * record per connection, with all bgrund knows and holds for it: its
 * identity (uid, pid, as the bus daemon vouched for it, asked for once by
 * bus-authority.c), the calls it has waiting (bus-pending.c), whether it
 * subscribed to signals, and the jobs it launched bound to it
 * (caller-binding.c). When the connection goes (bus-callers.c, the one
 * watch of departures), so does all of it: a caller that leaves leaves
 * nothing behind. A record that holds nothing but an identity is kept
 * among the last BUS_IDLE_CLIENTS_MAX such, the oldest forgotten first (a
 * flood of connections pins nothing); one that holds nothing at all is
 * dropped at once. Each connection and each uid may hold only so much. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

#include "caller-binding.h"
#include "map.h"

typedef struct BusService BusService;
typedef struct PendingCall PendingCall;

/* Calls one connection may have waiting at once, and one uid over all its
 * connections; subscribed connections per uid, and in all. */
#define BUS_CLIENT_PENDING_MAX 128
#define BUS_UID_PENDING_MAX 1024
#define BUS_UID_SUBSCRIBERS_MAX 64
#define BUS_SUBSCRIBERS_MAX 1024
/* Records kept for their identity alone. */
#define BUS_IDLE_CLIENTS_MAX 256

typedef struct BusClient {
        struct BusClient *next, *prev;     /* all clients */
        MapNode node;                      /* BusService.clients_by_name */
        BusService *service;
        char *name;                        /* the connection's unique name (":p2p.N" on --listen's) */
        sd_bus *bus;                       /* the connection its signals go out on */
        bool direct;                       /* a --listen connection: no bus daemon between */
        uid_t uid;
        pid_t pid;                         /* of the process that connected, 0 if unknown */
        bool identified;                   /* uid and pid as the bus daemon said (bus-authority.c) */
        PendingCall *pending;              /* its calls waiting on jobs */
        unsigned n_pending;
        bool subscribed;
        bool admin;                        /* sees every job's signals */
        CallerJobs bound;                  /* the jobs it launched with BindToCaller */
        struct BusClient *subscriber_next, *subscriber_prev;
        struct BusClient *idle_next, *idle_prev; /* BusService.idle_clients, oldest first */
        bool idle_listed;
} BusClient;

/* The client of m's sender, made when new; -ENOLINK when the departures
 * of callers on the bus are not seen (bus_callers_watched()). */
int bus_client_get(BusService *s, sd_bus_message *m, uid_t uid, BusClient **ret);
/* The same for a connection on the bus known by its unique name alone (a
 * bound job's caller, after a restart). */
int bus_client_get_name(BusService *s, const char *name, uid_t uid, BusClient **ret);

/* Whether one more pending call is allowed for c; LimitExceeded in error
 * when not. */
int bus_client_may_wait(BusClient *c, sd_bus_error *error);

/* The same for m's sender, without making a client of it. */
int bus_caller_may_wait(BusService *s, sd_bus_message *m, uid_t uid, sd_bus_error *error);

/* Count a call that starts (+1) or stops (-1) waiting on c's behalf. */
void bus_client_count_pending(BusClient *c, int delta);

/* The client of the connection of that name; NULL if bgrund holds
 * nothing for it. */
BusClient *bus_client_find(BusService *s, const char *name);

/* c's connection left (bus-callers.c), its waiting calls dropped already:
 * drop the rest of what it held. */
void bus_client_gone(BusClient *c);

/* Drop c if it holds nothing any more. */
void bus_client_release(BusClient *c);

/* c subscribes (admin: to every job's signals), within the limits:
 * LimitExceeded in error past them. */
int bus_client_subscribe(BusClient *c, bool admin, sd_bus_error *error);
/* c subscribes no more; it goes if it holds nothing else. */
void bus_client_unsubscribe(BusClient *c);

/* The bus daemon says who the connection of that name is: kept in its
 * record (made if need be, the newest of the idle ones). Out of memory,
 * nothing is kept, and its calls are refused. */
void bus_client_identified(BusService *s, sd_bus *bus, const char *name, uid_t uid, pid_t pid);
/* Who the connection of that name is, if known. */
bool bus_client_identity(BusService *s, const char *name, uid_t *ret_uid, pid_t *ret_pid);

/* bgrund is going: every binding ends with it, and no job is stopped as
 * the connections close (a restart takes the bindings up again from the
 * store, bus-caller-watch.c). The jobs are not looked at. */
void bus_clients_unbind(BusService *s);
void bus_clients_free(BusService *s);
