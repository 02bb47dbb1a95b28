/* SPDX-License-Identifier: MIT */
#pragma once

/* What the files of listen/ share: the listener and its connections.
 * bus-listen.c is the server (the socket, accepting, reading a client and
 * feeding sd-bus), listen-limits.c what it enforces as a bus daemon would,
 * listen-bus-daemon.c the bus daemon's methods a client library calls,
 * listen-connection.c a connection's end. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <sys/types.h>

#include "bus-listen.h"
#include "listen-framing.h"

#define LISTEN_FEED_BUFFER_SIZE (64U * 1024U)

typedef struct ListenConnection ListenConnection;

struct BusListen {
        BusService *service;
        sd_event *event;
        int fd;
        char *path;
        sd_event_source *accept_source, *accept_pause;
        ListenConnection *connections;
        unsigned n_connections, n_refusing;
        uint64_t next_id;
        sd_id128_t server_id;   /* the AUTH "OK" guid, and GetId's answer */
};

struct ListenConnection {
        ListenConnection *next, *prev;
        BusListen *listen;
        char name[32];          /* ":p2p.N": Hello's answer, what bus-client.c knows it by */
        uid_t uid;
        pid_t pid;
        char *refusal;          /* turned down: every call is answered with this */
        sd_bus *bus;
        int fd;                 /* the client's socket (sd-bus writes to a dup of it) */
        int feed;               /* our end of the pair sd-bus reads */
        sd_event_source *read_source, *feed_source, *auth_timer, *close_later, *held_source, *unread_timer;
        /* Where the client is in its stream: the authentication lines,
         * then messages, each a header and the bytes it declares. */
        ListenFraming framing;
        bool running;           /* sd-bus read BEGIN */
        unsigned held_retries;
        /* Its match rules, by hash (listen-bus-daemon.c). */
        uint64_t *matches;
        unsigned n_matches, n_matches_allocated;
        size_t buf_start, buf_end, buf_held; /* fed [start, end); [end, held) waits */
        uint8_t buf[LISTEN_FEED_BUFFER_SIZE];
};

/* listen-connection.c: a connection's end, and everything it held with it
 * (bus-callers.c). Free at once, or dropped (said) at once or later. */
void listen_connection_free(ListenConnection *c);
void listen_connection_drop(ListenConnection *c, const char *why);
/* Dropped at the next turn of the loop, for callers inside its sd-bus. */
void listen_connection_drop_later(ListenConnection *c, const char *why);
