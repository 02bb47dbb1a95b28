/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund --listen: org.bgrun.Runtime1 served peer to peer on a socket, for
 * where there is no bus (a container). Each accepted connection is an sd-bus
 * server connection of its own with the same objects; its owner is the
 * socket's peer (SO_PEERCRED). bgrund enforces what a bus daemon would
 * (listen-limits.h) and answers the bus daemon's methods client libraries
 * call as they connect (listen-bus-daemon.h). What a connection holds (its
 * waiting calls, its subscription, its match rules) goes when it goes. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

#include "macro.h"

typedef struct BusService BusService;
typedef struct BusListen BusListen;

/* Listen on address ("unix:path=PATH"): the directory is made if missing
 * (0755), the socket is 0666 (every local user may connect; what each may
 * do is decided by its peer credentials). The listener is s's peer-to-peer
 * server from then on (bus-peer.h): bus_service_free() frees it. */
int bus_listen_new(BusService *s, const char *address);
BusListen *bus_listen_free(BusListen *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusListen *, bus_listen_free);
