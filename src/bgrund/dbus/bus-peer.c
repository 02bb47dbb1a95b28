/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "bus-peer.h"
#include "bus-service.h"

int bus_peer_server_set(BusService *s, const BusPeerServer *ops, void *server) {
        if (s->peer_server)
                return -EBUSY;
        s->peer_ops = ops;
        s->peer_server = server;
        return 0;
}

void bus_peer_server_unset(BusService *s, void *server) {
        if (!server || s->peer_server != server)
                return;
        s->peer_ops = NULL;
        s->peer_server = NULL;
}

void bus_peer_server_free(BusService *s) {
        if (!s->peer_server)
                return;
        const BusPeerServer *ops = s->peer_ops;
        void *server = s->peer_server;
        bus_peer_server_unset(s, server);
        ops->free(server);
}

int bus_peer(BusService *s, sd_bus *bus, uid_t *ret_uid, pid_t *ret_pid, const char **ret_name) {
        if (!s->peer_server || !bus)
                return -ENXIO;
        return s->peer_ops->peer(s->peer_server, bus, ret_uid, ret_pid, ret_name);
}

bool bus_peer_may_send(BusService *s, sd_bus *bus) {
        if (!s->peer_server || !bus)
                return true;
        return s->peer_ops->may_send(s->peer_server, bus);
}

const char *bus_caller_name(BusService *s, sd_bus_message *m) {
        const char *name = NULL;
        if (bus_peer(s, sd_bus_message_get_bus(m), NULL, NULL, &name) >= 0)
                return name;
        return sd_bus_message_get_sender(m);
}
