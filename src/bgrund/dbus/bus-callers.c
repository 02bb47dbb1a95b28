/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bus-callers.h"
#include "bus-client.h"
#include "bus-peer.h"
#include "bus-pending.h"
#include "bus-sender.h"
#include "bus-service.h"
#include "caller-binding.h"
#include "log.h"
#include "macro.h"

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const char *name, *old_owner, *new_owner;
        /* Only the bus daemon's word that a connection left: anyone may send
         * bgrund a NameOwnerChanged of their own. */
        if (!bus_message_from_driver(m))
                return 0;
        /* Every name's change comes here: a few look-ups each, no more. */
        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 && name[0] == ':' && !*new_owner &&
            !startswith_s(name, BUS_PEER_NAME_PREFIX))
                bus_caller_gone(s, name);
        return 0;
}

static int on_match_installed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (!e)
                return 0;
        /* Never a caller's departure missed in silence: from now on nothing
         * that must go with its caller is accepted. */
        s->callers_match = sd_bus_slot_unref(s->callers_match);
        s->callers_match_failed = true;
        log_error("Cannot watch callers' connections (%s); waiting calls, subscriptions and BindToCaller are "
                  "refused from now on", e->message ?: e->name);
        return 0;
}

int bus_callers_start(BusService *s) {
        if (!s->bus)
                return 0;
        int r = sd_bus_add_match_async(s->bus, &s->callers_match,
                                       "type='signal',sender='" BUS_DRIVER_NAME "',path='/org/freedesktop/DBus',"
                                       "interface='" BUS_DRIVER_NAME "',member='NameOwnerChanged'",
                                       on_name_owner_changed, on_match_installed, s);
        if (r < 0) {
                log_error_errno(r, "Cannot watch callers' connections; waiting calls, subscriptions and "
                                   "BindToCaller are refused: %m");
                s->callers_match_failed = true;
        }
        return 0;
}

void bus_caller_gone(BusService *s, const char *name) {
        bus_authority_caller_gone(s->authority, name);
        BusClient *c = bus_client_find(s, name);
        if (c) {
                /* Its bound jobs stopped, its waiting calls dropped
                 * unanswered (nobody is there to read an answer), then its
                 * subscription and the rest. */
                (void) caller_jobs_stop(&c->bound, c->name);
                pending_calls_drop_client(c);
                bus_client_gone(c);
        }
}

void bus_callers_free(BusService *s) {
        s->callers_match = sd_bus_slot_unref(s->callers_match);
}
