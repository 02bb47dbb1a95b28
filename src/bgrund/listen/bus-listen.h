/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund --listen: org.bgrun.Runtime1 served peer to peer on a socket, for
 * where there is no bus (a container). Each accepted connection is an sd-bus
 * server connection of its own with the same objects; its owner is the
 * socket's peer (SO_PEERCRED), and bgrund enforces what a bus daemon would:
 * connections per uid and in all, a message size, an authentication timeout
 * (the calls waiting per connection are bus-client.c's). What a connection
 * holds (its waiting calls, its subscription) goes when it goes. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

#include "macro.h"

typedef struct BusService BusService;
typedef struct BusListen BusListen;

#define BUS_LISTEN_ADDRESS_SYSTEM "unix:path=/run/bgrun/bus"

/* Connections one uid may have open (root's included), and everyone's. */
#define BUS_LISTEN_UID_CONNECTIONS_MAX 64
#define BUS_LISTEN_CONNECTIONS_MAX 1024
/* Connections turned down, held until they heard why (LimitExceeded), for
 * BUS_LISTEN_AUTH_TIMEOUT_USEC at most. */
#define BUS_LISTEN_REFUSING_MAX 16
/* The largest message a client may send; nothing it sends needs more. */
#define BUS_LISTEN_MESSAGE_MAX (4U * 1024U * 1024U)
/* What bgrund keeps for a client that does not read: past this many of its
 * answers unread, its calls are refused (LimitExceeded) until it reads, and
 * its socket is not read meanwhile; past BUS_LISTEN_UNREAD_DROP messages of
 * any kind (signals too), it is dropped. An answer is 4 MiB at most
 * (ReadOutput), so a connection holds about 8 MiB of bgrund's at most. */
#define BUS_LISTEN_UNREAD_MAX 2U
#define BUS_LISTEN_UNREAD_DROP 64U
/* A connection that has not finished authenticating by then is dropped. */
#define BUS_LISTEN_AUTH_TIMEOUT_USEC (5 * USEC_PER_SEC)

/* Listen on address ("unix:path=PATH"): the directory is made if missing
 * (0755), the socket is 0666 (every local user may connect; what each may
 * do is decided by its peer credentials). The listener is s's peer-to-peer
 * server from then on (bus-peer.h): bus_service_free() frees it. */
int bus_listen_new(BusService *s, const char *address);
BusListen *bus_listen_free(BusListen *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusListen *, bus_listen_free);
