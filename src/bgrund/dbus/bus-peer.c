/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "bus-peer.h"

static const BusPeerServer *peer_ops;
static void *peer_server;

int bus_peer_server_set(const BusPeerServer *ops, void *server) {
        if (peer_server)
                return -EBUSY;
        peer_ops = ops;
        peer_server = server;
        return 0;
}

void bus_peer_server_unset(void *server) {
        if (!server || peer_server != server)
                return;
        peer_ops = NULL;
        peer_server = NULL;
}

void bus_peer_server_free(void) {
        if (!peer_server)
                return;
        const BusPeerServer *ops = peer_ops;
        void *server = peer_server;
        bus_peer_server_unset(server);
        ops->free(server);
}

int bus_peer(sd_bus *bus, uid_t *ret_uid, pid_t *ret_pid, const char **ret_name) {
        if (!peer_server || !bus)
                return -ENXIO;
        return peer_ops->peer(peer_server, bus, ret_uid, ret_pid, ret_name);
}

bool bus_peer_may_send(sd_bus *bus) {
        if (!peer_server || !bus)
                return true;
        return peer_ops->may_send(peer_server, bus);
}
