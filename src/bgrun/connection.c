/* SPDX-License-Identifier: MIT */
/* The connection to bgrund: the bus or address the target says, or bgrund
 * --listen's default socket where there is no bus. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bgrun/bus-api.h"
#include "call-error.h"
#include "connection.h"
#include "daemon-check.h"
#include "deadline.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

sd_bus *bus_close(sd_bus *bus) {
        /* sd_bus_flush() waits, without end, for a connection still being
         * set up to be set up (a stopped bgrund --listen): flush only one
         * that is. */
        if (bus && sd_bus_is_ready(bus) > 0)
                (void) sd_bus_flush(bus);
        return sd_bus_close_unref(bus);
}

/* Any call sd-bus makes on its own (Hello, a call given no timeout) gets
 * the deadline. (While it authenticates, sd-bus heeds no call's timeout:
 * pending_call_reply() keeps the deadline itself.) */
static int bus_set_deadline(sd_bus *bus) {
        return sd_bus_set_method_call_timeout(bus, call_deadline_usec());
}

/* Waits until the connection is set up (authenticated, and on a bus
 * Hello answered), within the deadline: sd-bus alone would wait for the
 * authentication up to 90 s. -ETIMEDOUT when the peer does not answer in
 * time. Only where the answer is needed before any call: it costs a round
 * trip that a call sent at once would share. */
static int bus_wait_ready(sd_bus *bus) {
        uint64_t deadline = now_monotonic_usec() + call_deadline_usec();
        int r;

        for (;;) {
                uint64_t now;

                r = sd_bus_is_ready(bus);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                now = now_monotonic_usec();
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = sd_bus_wait(bus, deadline - now);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

static int bus_open_address(const char *address, bool bus_client, sd_bus **ret) {
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r < 0)
                return r;
        r = sd_bus_set_bus_client(bus, bus_client);
        if (r < 0)
                return r;
        r = bus_set_deadline(bus);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

/* Any address: a bus (which wants Hello first) or bgrund --listen (peer to
 * peer, which does not know Hello). Try a bus; if the peer turns Hello down,
 * it is bgrund itself. */
static int bus_open_any_address(const char *address, sd_bus **ret) {
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        const char *unique;
        int r;

        /* Ready only once Hello was answered. */
        r = bus_open_address(address, true, &bus);
        if (r >= 0)
                r = bus_wait_ready(bus);
        if (r >= 0)
                r = sd_bus_get_unique_name(bus, &unique);
        if (r >= 0) {
                bus_reached_set(REACHED_BUS_ADDRESS, address);
                *ret = TAKE_PTR(bus);
                return 0;
        }
        if (errno_means_nobody_there(r) || r == -ETIMEDOUT)
                return r;

        log_debug_errno(r, "No bus at %s (Hello: %m), talking to bgrund directly.", address);
        bus = bus_close(bus);
        bus_reached_set(REACHED_LISTEN, address);
        return bus_open_address(address, false, ret);
}

/* Where bgrund --listen would be for target, with no bus to reach. */
static int listen_address(const BusTarget *target, char **ret) {
        const char *runtime_dir;

        if (target->transport != BUS_TRANSPORT_USER) {
                *ret = strdup(BGRUN_LISTEN_ADDRESS_SYSTEM);
                return *ret ? 0 : -ENOMEM;
        }

        runtime_dir = getenv("XDG_RUNTIME_DIR");
        if (!runtime_dir || runtime_dir[0] != '/')
                return -ENXIO;
        return asprintf(ret, "unix:path=%s/" BGRUN_LISTEN_SOCKET_USER, runtime_dir) < 0 ? -ENOMEM : 0;
}

int bus_caller_uid(sd_bus *bus, uid_t *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *unique;
        uint32_t uid;
        int r;

        /* Peer to peer, bgrund takes the socket's peer credentials: ours. */
        if (!sd_bus_is_bus_client(bus)) {
                *ret = geteuid();
                return 0;
        }
        /* On a bus (also another host's, through ssh): as the bus sees us. */
        r = sd_bus_get_unique_name(bus, &unique);
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetConnectionUnixUser", NULL, &reply, "s", unique);
        if (r >= 0)
                r = sd_bus_message_read(reply, "u", &uid);
        if (r < 0)
                return log_error_errno(r, "Failed to learn which user the bus sees this bgrun as: %m");
        *ret = (uid_t) uid;
        return 0;
}

bool bus_target_is_remote(const BusTarget *target) {
        return target->host;
}

static const char *address_from_environment(void) {
        const char *e;

        e = getenv("BGRUN_ADDRESS");
        if (e && e[0])
                return e;
        e = getenv("BGRUN_BUS_ADDRESS"); /* its older name */
        if (e && e[0])
                return e;
        return NULL;
}

static int connect_target(const BusTarget *target, sd_bus **ret) {
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        static char *fallback = NULL;
        const char *address = target->address;
        int r;

        if (target->host) {
                bus_reached_set(REACHED_REMOTE, target->host);
                r = sd_bus_open_system_remote(&bus, target->host);
                if (r >= 0)
                        r = bus_set_deadline(bus);
                if (r < 0)
                        return log_remote_unreachable(target->host, r);
                *ret = TAKE_PTR(bus);
                return 0;
        }

        if (!address && !target->transport_given)
                address = address_from_environment();

        if (address) {
                bus_reached_set(REACHED_BUS_ADDRESS, address);
                r = bus_open_any_address(address, &bus);
                if (errno_means_nobody_there(r))
                        return log_error_errno(r, "Nothing listens on %s (%m): is bgrund --listen, or the bus, there?",
                                               address);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to %s: %m", address);
                *ret = TAKE_PTR(bus);
                return 0;
        }

        if (target->transport == BUS_TRANSPORT_USER) {
                bus_reached_set(REACHED_USER_BUS, NULL);
                r = sd_bus_open_user(&bus);
        } else {
                bus_reached_set(REACHED_SYSTEM_BUS, NULL);
                r = sd_bus_open_system(&bus);
        }
        if (r >= 0)
                r = bus_set_deadline(bus);
        if (r >= 0) {
                r = daemon_check_start(bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to send NameHasOwner call: %m");
                *ret = TAKE_PTR(bus);
                return 0;
        }
        if (!errno_means_nobody_there(r) && r != -ENOMEDIUM)
                return log_error_errno(r, "Failed to connect to the %s bus: %m",
                                       target->transport == BUS_TRANSPORT_USER ? "user" : "system");

        /* No bus at all (a container): bgrund --listen's default socket. */
        r = listen_address(target, &fallback);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "No user bus, and XDG_RUNTIME_DIR is not set to find bgrund --listen.");

        bus_reached_set(REACHED_LISTEN, fallback);
        r = bus_open_address(fallback, false, &bus);
        if (errno_means_nobody_there(r)) {
                log_daemon_missing();
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to connect to %s: %m", fallback);

        *ret = TAKE_PTR(bus);
        return 0;
}

int bus_connect(const BusTarget *target, sd_bus **ret) {
        int r = connect_target(target, ret);
        /* Inside a sandboxed job every way to bgrund is closed, on purpose:
         * say so, after whatever the attempt found. */
        const char *sandbox = getenv("BGRUN_SANDBOX");
        if (r < 0 && sandbox && sandbox[0])
                log_error("This is a sandboxed job (BGRUN_SANDBOX=%.64s): its sandbox keeps bgrund out of its reach, "
                          "so it starts no work outside it.", sandbox);
        return r;
}
