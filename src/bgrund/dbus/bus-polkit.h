/* SPDX-License-Identifier: MIT */
#pragma once

/* Asking polkit whether the sender of a message is granted an action, without
 * ever blocking bgrund. The first call for a message starts the query and
 * returns -EINPROGRESS; the method handler then returns without replying.
 * When polkit answers, the message is queued for dispatch again
 * (sd_bus_enqueue_for_read) and the second call returns the answer; an
 * answer its handler does not ask for again is dropped after that dispatch
 * (bus_polkit_attach()'s filter). */

#include <systemd/sd-bus.h>
#include <sys/types.h>

typedef struct BusService BusService;
typedef struct PolkitQuery PolkitQuery;

#define BGRUN_POLKIT_MANAGE_ANY "org.bgrun.manage-any"

/* Queries in flight at once, for one uid and in all: a caller that floods
 * bgrund with calls that need polkit holds no more than this, and past it
 * is not granted (it asks for nothing it could not ask for again later). */
#define BUS_POLKIT_QUERIES_PER_UID_MAX 32
#define BUS_POLKIT_QUERIES_MAX 512

/* An answer is kept for its sender (a unique name, never reused) this long:
 * a caller's calls in a row ask once, and an admin granted or revoked is
 * seen within it. */
#define BUS_POLKIT_CACHE_USEC (1000ULL * 1000ULL)
#define BUS_POLKIT_CACHE_SIZE 64

typedef struct PolkitCached {
        char sender[64];
        const char *action; /* one of the BGRUN_POLKIT_* strings */
        int result;
        uint64_t until;     /* CLOCK_MONOTONIC µs */
} PolkitCached;

/* 1 granted, 0 not granted (also when polkit is not running or fails, or
 * when uid, the sender's, has too many queries in flight), -EINPROGRESS
 * while asking, other -errno when the query cannot start. */
int bus_polkit_check(BusService *s, sd_bus_message *m, uid_t uid, const char *action);

/* The filter that hands an answer to its message's next dispatch: on the
 * bus the queries are made on, after any filter that may hold a message. */
int bus_polkit_attach(BusService *s, sd_bus *bus);

/* Drop every pending query (on shutdown). */
void bus_polkit_queries_free(BusService *s);
