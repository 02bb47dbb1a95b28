/* SPDX-License-Identifier: MIT */
/* bgrund --listen's limits: what a bus daemon would enforce, bgrund does
 * itself, each a count and a bound, with an answer that says which. */
#include <inttypes.h>
#include <stdio.h>

#include "bgrun/bus-api.h"
#include "listen-limits.h"
#include "log.h"

/* How often to look whether a client that stopped reading has read. */
#define UNREAD_RETRY_USEC (10 * USEC_PER_MSEC)

const char *listen_limits_refusal(BusListen *l, uid_t uid, char *buf, size_t size) {
        unsigned same = 0;
        for (ListenConnection *c = l->connections; c; c = c->next)
                if (!c->refusal && c->uid == uid)
                        same++;
        if (same >= BUS_LISTEN_UID_CONNECTIONS_MAX) {
                snprintf(buf, size, "uid %u has %d connections to bgrund open already, the most it may",
                         (unsigned) uid, BUS_LISTEN_UID_CONNECTIONS_MAX);
                return buf;
        }
        if (uid != 0 && l->n_connections >= BUS_LISTEN_CONNECTIONS_MAX) {
                snprintf(buf, size, "bgrund has %d connections open already, the most it serves",
                         BUS_LISTEN_CONNECTIONS_MAX);
                return buf;
        }
        return NULL;
}

/* Messages sd-bus holds for the client, not yet taken by its socket: what a
 * client that does not read makes bgrund keep. */
static uint64_t connection_unread(ListenConnection *c) {
        uint64_t n = 0;
        return sd_bus_get_n_queued_write(c->bus, &n) >= 0 ? n : 0;
}

static int on_unread_retry(sd_event_source *src, uint64_t usec, void *userdata) {
        ListenConnection *c = userdata;
        if (connection_unread(c) > 0) {
                (void) sd_event_source_set_time_relative(src, UNREAD_RETRY_USEC);
                return sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
        }
        c->unread_timer = sd_event_source_disable_unref(c->unread_timer);
        (void) sd_event_source_set_enabled(c->read_source, SD_EVENT_ON);
        return 0;
}

/* While it has not read what it was sent, read nothing more of what it
 * sends: its calls wait in its socket, not in bgrund. */
bool listen_limits_wait_for_reader(ListenConnection *c) {
        if (!c->running || connection_unread(c) == 0)
                return false;
        (void) sd_event_source_set_enabled(c->read_source, SD_EVENT_OFF);
        if (!c->unread_timer &&
            sd_event_add_time_relative(c->listen->event, &c->unread_timer, CLOCK_MONOTONIC, UNREAD_RETRY_USEC,
                                       USEC_PER_MSEC, on_unread_retry, c) < 0)
                listen_connection_drop_later(c, "out of memory");
        return true;
}

bool listen_limits_may_send(ListenConnection *c) {
        if (connection_unread(c) < BUS_LISTEN_UNREAD_DROP)
                return true;
        listen_connection_drop_later(c, "it does not read what it is sent");
        return false;
}

/* A connection turned down hears why at its first call to bgrund, and
 * goes. (The bus daemon's methods are answered: a client library in bus
 * mode would take an error to Hello for a broken connection, and never
 * show the reason.) */
static int refuse_filter(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        if (!sd_bus_message_is_method_call(m, NULL, NULL) ||
            sd_bus_message_is_method_call(m, "org.freedesktop.DBus", NULL))
                return 0;
        (void) sd_bus_reply_method_errorf(m, BGRUN_ERROR_LIMIT_EXCEEDED, "%s", c->refusal);
        (void) sd_bus_flush(c->bus);
        listen_connection_drop_later(c, "turned down, and told why");
        return 1;
}

/* Calls of a client that leaves bgrund's answers unread: refused while
 * BUS_LISTEN_UNREAD_MAX are, and the client dropped past
 * BUS_LISTEN_UNREAD_DROP (refusals are answers too). Those already read
 * from its socket are all that can come meanwhile (wait_for_reader). */
static int unread_filter(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        uint64_t n = connection_unread(c);
        if (n >= BUS_LISTEN_UNREAD_DROP) {
                listen_connection_drop_later(c, "it does not read what it is sent");
                return 1;
        }
        if (n < BUS_LISTEN_UNREAD_MAX)
                return 0;
        (void) sd_bus_reply_method_errorf(m, BGRUN_ERROR_LIMIT_EXCEEDED,
                                          "This connection has %" PRIu64 " answers it has not read, the most bgrund "
                                          "keeps for it: read them first",
                                          n);
        return 1;
}

static int on_auth_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        ListenConnection *c = userdata;
        if (c->refusal)
                listen_connection_drop(c, "turned down, and gone quiet");
        else if (!c->framing.authenticated || sd_bus_is_ready(c->bus) <= 0)
                listen_connection_drop(c, "not authenticated in time");
        return 0;
}

int listen_limits_attach(ListenConnection *c) {
        int r = sd_bus_add_filter(c->bus, NULL, c->refusal ? refuse_filter : unread_filter, c);
        if (r < 0)
                return r;
        return sd_event_add_time_relative(c->listen->event, &c->auth_timer, CLOCK_MONOTONIC,
                                          BUS_LISTEN_AUTH_TIMEOUT_USEC, 0, on_auth_timeout, c);
}

void listen_limits_authenticated(ListenConnection *c) {
        /* A turned-down connection keeps its timer: it has that long to
         * call and hear why, and holds a slot of BUS_LISTEN_REFUSING_MAX. */
        if (!c->refusal)
                c->auth_timer = sd_event_source_disable_unref(c->auth_timer);
}
