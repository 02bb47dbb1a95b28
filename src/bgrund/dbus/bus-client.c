/* SPDX-License-Identifier: MIT */
#include <assert.h>

#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-callers.h"
#include "bus-client.h"
#include "bus-peer.h"
#include "bus-sender.h"
#include "bus-service.h"
#include "list.h"
#include "log.h"
#include "macro.h"

/* Per uid: what all its connections hold. Few uids call bgrund. */
typedef struct UidTally {
        struct UidTally *next;
        uid_t uid;
        unsigned pending;
        unsigned subscribers;
} UidTally;

static UidTally *tally(BusService *s, uid_t uid) {
        for (UidTally *t = s->tallies; t; t = t->next)
                if (t->uid == uid)
                        return t;
        UidTally *t = calloc(1, sizeof(UidTally));
        if (!t)
                return NULL;
        t->uid = uid;
        t->next = s->tallies;
        s->tallies = t;
        return t;
}

static void name_hash(const void *key, SipHash *state) {
        map_feed_string(state, key);
}

static bool name_is(const MapNode *node, const void *key) {
        return streq(MAP_ITEM(node, BusClient, node)->name, key);
}

static const MapType by_name = { .hash = name_hash, .has_key = name_is };

BusClient *bus_client_find(BusService *s, const char *name) {
        MapNode *node = map_get(&s->clients_by_name, name);
        return node ? MAP_ITEM(node, BusClient, node) : NULL;
}

static void client_unsubscribe(BusClient *c) {
        BusService *s = c->service;
        if (!c->subscribed)
                return;
        c->subscribed = false;
        if (c->subscriber_prev)
                c->subscriber_prev->subscriber_next = c->subscriber_next;
        else
                s->subscribers = c->subscriber_next;
        if (c->subscriber_next)
                c->subscriber_next->subscriber_prev = c->subscriber_prev;
        c->subscriber_next = c->subscriber_prev = NULL;
        s->n_subscribers--;
        UidTally *t = tally(s, c->uid);
        if (t)
                t->subscribers--;
}

static bool holds(const BusClient *c) {
        return c->n_pending > 0 || c->subscribed || c->bound.head;
}

static void idle_unlink(BusClient *c) {
        if (!c->idle_listed)
                return;
        QUEUE_REMOVE(idle, c->service->idle_clients, c);
        c->idle_listed = false;
        c->service->n_idle_clients--;
}

static void client_free(BusClient *c);

/* c holds nothing but its identity (or has just got it): the newest of
 * the idle, and past BUS_IDLE_CLIENTS_MAX the oldest forgotten. One that
 * has come to hold something since it was listed only leaves the list. */
static void idle_push(BusClient *c) {
        BusService *s = c->service;
        idle_unlink(c);
        QUEUE_APPEND(idle, s->idle_clients, c);
        c->idle_listed = true;
        s->n_idle_clients++;
        while (s->n_idle_clients > BUS_IDLE_CLIENTS_MAX) {
                BusClient *oldest = s->idle_clients.head;
                idle_unlink(oldest);
                if (!holds(oldest))
                        client_free(oldest);
        }
}

static void client_free(BusClient *c) {
        BusService *s = c->service;
        idle_unlink(c);
        /* Its waiting calls went first (bus_caller_gone(), or at shutdown
         * pending_calls_drop_all()); a client is never freed under them. */
        assert(!c->pending);
        client_unsubscribe(c);
        /* Only at bgrund's end does a client go with jobs still bound: the
         * jobs are not looked at (they may be gone already). */
        caller_jobs_clear(&c->bound);
        (void) map_remove(&s->clients_by_name, &c->node);
        LIST_REMOVE(s->clients, c);
        free(c->name);
        free(c);
}

/* A new record for the connection of that name, holding nothing yet. */
static int client_new(BusService *s, sd_bus *bus, bool direct, const char *name, uid_t uid, BusClient **ret) {
        BusClient *c = calloc(1, sizeof(BusClient));
        if (!c)
                return -ENOMEM;
        *c = (BusClient) { .service = s, .uid = uid, .name = strdup(name), .bus = bus, .direct = direct };
        if (!s->clients_by_name.type)
                s->clients_by_name = MAP_INIT(&by_name);
        int r = c->name ? map_put(&s->clients_by_name, &c->node, c->name) : -ENOMEM;
        if (r < 0) {
                free(c->name);
                free(c);
                return r;
        }
        LIST_PREPEND(s->clients, c);
        *ret = c;
        return 0;
}

/* The record of a connection that is to hold something. What it holds must
 * go with it: only if its going is seen (bus-callers.c; a direct
 * connection's, by bus-listen.c). One that holds something already was
 * made while it was. */
static int client_get(BusService *s, sd_bus *bus, bool direct, const char *name, uid_t uid, BusClient **ret) {
        BusClient *c = bus_client_find(s, name);
        if (c && holds(c)) {
                *ret = c;
                return 0;
        }
        if (!direct && !bus_callers_watched(s))
                return -ENOLINK;
        if (c) {
                *ret = c;
                return 0;
        }
        return client_new(s, bus, direct, name, uid, ret);
}

int bus_client_get(BusService *s, sd_bus_message *m, uid_t uid, BusClient **ret) {
        /* On the bus, the unique name the bus daemon gave the sender; on a
         * direct connection (--listen), the name bgrund gave it. */
        sd_bus *bus = sd_bus_message_get_bus(m);
        bool direct = bus_peer(s, bus, NULL, NULL, NULL) >= 0;
        const char *name = bus_caller_name(s, m);
        if (!name)
                return -ENXIO;
        return client_get(s, bus, direct, name, uid, ret);
}

int bus_client_get_name(BusService *s, const char *name, uid_t uid, BusClient **ret) {
        return client_get(s, s->bus, false, name, uid, ret);
}

void bus_client_gone(BusClient *c) {
        log_debug("Connection %s of uid %u left; dropping what it held", c->name, (unsigned) c->uid);
        client_free(c);
}

static int may_wait(BusService *s, const BusClient *c, uid_t uid, sd_bus_error *error) {
        UidTally *t = tally(s, uid);
        if (!t)
                return -ENOMEM;
        if (c && c->n_pending >= BUS_CLIENT_PENDING_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "This connection has %d calls waiting already, the most it may", BUS_CLIENT_PENDING_MAX);
        if (t->pending >= BUS_UID_PENDING_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "uid %u has %d calls waiting already, the most it may", (unsigned) uid,
                                         BUS_UID_PENDING_MAX);
        return 0;
}

int bus_client_may_wait(BusClient *c, sd_bus_error *error) {
        return may_wait(c->service, c, c->uid, error);
}

int bus_caller_may_wait(BusService *s, sd_bus_message *m, uid_t uid, sd_bus_error *error) {
        const char *name = bus_caller_name(s, m);
        if (!name)
                return -ENXIO;
        return may_wait(s, bus_client_find(s, name), uid, error);
}

void bus_client_count_pending(BusClient *c, int delta) {
        UidTally *t = tally(c->service, c->uid);
        c->n_pending += delta;
        if (t)
                t->pending += delta;
}

void bus_client_release(BusClient *c) {
        if (holds(c))
                return;
        /* Its identity is worth keeping a while (the calls that follow need
         * it); nothing else. */
        if (c->identified)
                idle_push(c);
        else
                client_free(c);
}

void bus_client_identified(BusService *s, sd_bus *bus, const char *name, uid_t uid, pid_t pid) {
        BusClient *c = bus_client_find(s, name);
        if (!c && client_new(s, bus, false, name, uid, &c) < 0)
                return; /* not kept: its calls are refused, never guessed */
        c->identified = true;
        c->uid = uid;
        c->pid = pid;
        if (!holds(c))
                idle_push(c);
}

bool bus_client_identity(BusService *s, const char *name, uid_t *ret_uid, pid_t *ret_pid) {
        BusClient *c = bus_client_find(s, name);
        if (!c || !c->identified)
                return false;
        *ret_uid = c->uid;
        *ret_pid = c->pid;
        return true;
}

int bus_client_subscribe(BusClient *c, bool admin, sd_bus_error *error) {
        BusService *s = c->service;
        c->admin = admin;
        if (c->subscribed)
                return 0;
        UidTally *t = tally(s, c->uid);
        if (!t)
                return -ENOMEM;
        if (t->subscribers >= BUS_UID_SUBSCRIBERS_MAX || s->n_subscribers >= BUS_SUBSCRIBERS_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "Too many subscribed connections (at most %d per uid, %d in all)",
                                         BUS_UID_SUBSCRIBERS_MAX, BUS_SUBSCRIBERS_MAX);
        c->subscribed = true;
        c->subscriber_prev = NULL;
        c->subscriber_next = s->subscribers;
        if (s->subscribers)
                s->subscribers->subscriber_prev = c;
        s->subscribers = c;
        s->n_subscribers++;
        t->subscribers++;
        return 0;
}

void bus_client_unsubscribe(BusClient *c) {
        client_unsubscribe(c);
        bus_client_release(c);
}

void bus_clients_unbind(BusService *s) {
        for (BusClient *c = s->clients; c; c = c->next)
                caller_jobs_clear(&c->bound);
}

void bus_clients_free(BusService *s) {
        while (s->clients)
                client_free(s->clients);
        map_done(&s->clients_by_name);
        while (s->tallies) {
                UidTally *t = s->tallies;
                s->tallies = t->next;
                free(t);
        }
}
