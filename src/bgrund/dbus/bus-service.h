/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund's D-Bus face: the connection on which org.bgrun.Runtime1 is served,
 * its objects (bus-manager.c, bus-job.c), the calls waiting on a job
 * (bus-pending.c), and the signals. It implements the runtime's
 * JobNotifier; every bus message bgrund handles stays on this side. */

#include <systemd/sd-bus.h>

#include "bus-job-path.h"
#include "bus-polkit.h"
#include "list.h"
#include "macro.h"
#include "map.h"
#include "runtime.h"


typedef struct BusService {
        sd_bus *bus;                        /* NULL: no bus, only the --listen socket */
        const char *listen_address;         /* bgrund --listen, or NULL */
        Runtime *runtime;
        struct PolkitQuery *polkit_queries; /* authorization checks in flight */
        struct PolkitQuery *polkit_answer;  /* the answer for the message being dispatched */
        PolkitCached polkit_cache[BUS_POLKIT_CACHE_SIZE]; /* recent answers, by sender */
        unsigned polkit_cache_next;
        struct BusClient *clients;          /* callers' connections (bus-client.h) */
        Map clients_by_name;                /* BusClient by unique name */
        QUEUE(struct BusClient) idle_clients; /* those kept for their identity alone, oldest first */
        unsigned n_idle_clients;
        struct BusClient *subscribers;      /* connections that called Subscribe */
        unsigned n_subscribers;
        const struct BusPeerServer *peer_ops; /* the --listen server (bus-peer.h), or NULL */
        void *peer_server;
        struct BusAuthority *authority;     /* who is calling (bus-authority.c) */
        struct UidTally *tallies;           /* per uid, over its connections */
        Map pending_jobs;                   /* calls held, by job (bus-pending.c's PendingJob) */
        struct Listing *listings;           /* answers of ListJobs and ListJobsPaged being built (bus-listing.c) */
        sd_bus_slot *callers_match;         /* the one NameOwnerChanged match (bus-callers.c) */
        bool callers_match_failed;
} BusService;

/* Connect ($BGRUN_BUS_ADDRESS, or the system bus), register the objects and
 * become the runtime's notifier. The name is requested by
 * bus_service_start(), once the runtime has loaded its jobs. With
 * listen_address (bgrund --listen; listen/ serves it, see bus-peer.h), a bus
 * that cannot be reached is no error: then the socket is the only way in.
 * Freeing the service frees the peer-to-peer server too. */
int bus_service_new(BusService **ret, Runtime *rt, const char *listen_address);
BusService *bus_service_free(BusService *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusService *, bus_service_free);

int bus_service_start(BusService *s);

/* Register the Manager and the job objects on bus (the bus connection, or
 * one peer-to-peer connection). */
int bus_service_add_objects(BusService *s, sd_bus *bus);
