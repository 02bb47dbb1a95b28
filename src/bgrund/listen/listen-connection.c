/* SPDX-License-Identifier: MIT */
/* A peer-to-peer connection's end: what the server (bus-listen.c) and its
 * limits (listen-limits.c) both call, so that neither calls the other back. */

#include "bus-callers.h"
#include "list.h"
#include "listen-bus-daemon.h"
#include "listen-connection.h"
#include "log.h"
#include "macro.h"

void listen_connection_free(ListenConnection *c) {
        if (!c)
                return;
        BusListen *l = c->listen;
        /* A refused connection was never a caller: it holds nothing. */
        if (!c->refusal)
                bus_caller_gone(l->service, c->name);
        LIST_REMOVE(l->connections, c);
        if (c->refusal)
                l->n_refusing--;
        else
                l->n_connections--;
        sd_event_source_disable_unref(c->read_source);
        sd_event_source_disable_unref(c->feed_source);
        sd_event_source_disable_unref(c->auth_timer);
        sd_event_source_disable_unref(c->close_later);
        sd_event_source_disable_unref(c->held_source);
        sd_event_source_disable_unref(c->unread_timer);
        sd_bus_close_unref(c->bus);
        listen_bus_daemon_detach(c);
        safe_close(c->fd);
        safe_close(c->feed);
        free(c->refusal);
        free(c);
}

void listen_connection_drop(ListenConnection *c, const char *why) {
        log_debug("Peer-to-peer connection %s of uid %u dropped: %s", c->name, (unsigned) c->uid, why);
        listen_connection_free(c);
}

static int on_close_later(sd_event_source *src, void *userdata) {
        listen_connection_free(userdata);
        return 0;
}

void listen_connection_drop_later(ListenConnection *c, const char *why) {
        if (c->close_later)
                return;
        log_debug("Peer-to-peer connection %s of uid %u dropped: %s", c->name, (unsigned) c->uid, why);
        (void) sd_event_add_defer(c->listen->event, &c->close_later, on_close_later, c);
}
