/* SPDX-License-Identifier: MIT */
#pragma once

/* What bgrund --listen enforces as a bus daemon would, for clients that may
 * be hostile to each other: connections per uid and in all, how long a
 * client has to authenticate, the message size (listen-framing.c), match
 * rules per connection, and what bgrund keeps for a client that does not
 * read (the calls waiting per connection are bus-client.c's). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

#include "listen-connection.h"

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
/* Match rules one connection may hold (8 bytes each), and the longest
 * (dbus-daemon's). */
#define BUS_LISTEN_MATCH_RULES_MAX 256U
#define BUS_LISTEN_MATCH_RULE_LENGTH_MAX 1024U

/* Why a new connection of uid is turned down (into buf), or NULL if it is
 * not. */
const char *listen_limits_refusal(BusListen *l, uid_t uid, char *buf, size_t size);

/* The filter of a connection that is served (unread answers) or turned
 * down (its first call hears why), and its authentication timer. */
int listen_limits_attach(ListenConnection *c);
/* The authentication is over: the timer goes, unless the connection is
 * turned down (it has that long to call and hear why). */
void listen_limits_authenticated(ListenConnection *c);

/* While the client has not read what it was sent, its socket is not read:
 * true if it is not to be read now (it will be, once it has read). */
bool listen_limits_wait_for_reader(ListenConnection *c);
/* Whether bgrund may send c one more message; if not, c is dropped soon. */
bool listen_limits_may_send(ListenConnection *c);
