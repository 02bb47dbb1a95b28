/* SPDX-License-Identifier: MIT */
#pragma once

/* One client connection to a job's proxy, and the upstream connection it
 * makes: a CONNECT tunnel, or one http:// request forwarded to its host
 * with "Connection: close", whose answer is passed back until the host
 * closes, and the client's connection with it. So an upstream connection
 * serves one host and one request, and every request is checked on a
 * connection of its own; what a client sends past its request's body is
 * never passed on. Bounded: a head of HTTP_HEAD_MAX, a buffer of
 * CONNECTION_BUFFER each way. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "chunked.h"
#include "http-request.h"
#include "relay.h"
#include "resolver.h"

#define CONNECTION_BUFFER (64 * 1024)
/* What a refused client may still send after its answer, read and dropped. */
#define CONNECTION_LINGER_MAX (256 * 1024)

typedef struct Buffer {
        size_t start, end;
        char data[CONNECTION_BUFFER];
} Buffer;

typedef enum ConnectionState {
        CONNECTION_HEAD,        /* reading a request head */
        CONNECTION_RESOLVING,   /* its host being resolved (lookup) */
        CONNECTION_CONNECTING,  /* a connect() under way (next: the address after it) */
        CONNECTION_TUNNEL,      /* CONNECT: bytes both ways */
        CONNECTION_FORWARD,     /* a request's body to upstream, its answer back */
        CONNECTION_CLOSING,     /* what is left to the client, then its bytes dropped until it closes */
} ConnectionState;

typedef struct Proxy Proxy;

typedef struct Connection {
        Proxy *proxy;
        void *proxy_data;               /* the loop's (proxy.c) */
        struct Connection *next, *prev;
        int client, upstream;
        unsigned upstream_serial;       /* counts the upstream sockets it made: a new one may reuse a number */
        ConnectionState state;
        uint64_t last_active;           /* CLOCK_MONOTONIC µs */
        HttpRequest request;
        bool exact;                     /* its list names the host itself: private addresses too */
        Lookup *lookup;
        struct addrinfo *addresses, *next_address;
        bool client_eof, upstream_eof;
        uint64_t body_left;             /* Content-Length's bytes still to pass */
        Chunked chunked;
        bool body_done;
        bool answer_marked;             /* "Connection: close" put after the answer's status line */
        bool client_shut;               /* CLOSING: its answer is out, what it sends is dropped */
        size_t lingered;                /* bytes dropped so */
        Buffer to_upstream, to_client;
        Relay up, down;                 /* spliced: client to host, host to client (relay.h) */
        size_t head_len;
        char head[HTTP_HEAD_MAX];
} Connection;

/* A new connection from a client (its socket, non-blocking). */
Connection *connection_new(Proxy *p, int client);
void connection_free(Connection *c);

/* Work through what the sockets allow now: reads and writes as far as the
 * buffers take, each state's next step. Returns false once it is done (to
 * be freed). */
bool connection_run(Connection *c);

/* Its lookup answered. */
void connection_resolved(Connection *c, Lookup *l);
/* Its host was not resolved or connected to in time: 504, then closed. */
void connection_time_out(Connection *c);

/* Which events each of its sockets waits for now (EPOLLIN, EPOLLOUT). */
uint32_t connection_client_events(const Connection *c);
uint32_t connection_upstream_events(const Connection *c);
