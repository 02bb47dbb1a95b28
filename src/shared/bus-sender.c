/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-sender.h"

static bool same(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

bool bus_message_from_driver(sd_bus_message *m) {
        /* Only on a bus: a direct connection's peer writes what it likes. */
        return sd_bus_is_bus_client(sd_bus_message_get_bus(m)) > 0 &&
               same(sd_bus_message_get_sender(m), BUS_DRIVER_NAME);
}

static int set_owner(BusNameOwner *o, const char *owner) {
        char *copy = NULL;
        if (owner && *owner && !(copy = strdup(owner)))
                return -ENOMEM;
        free(o->owner);
        o->owner = copy;
        return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusNameOwner *o = userdata;
        const char *name, *old_owner, *new_owner;
        if (!bus_message_from_driver(m) || sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 ||
            !same(name, o->name))
                return 0;
        /* Out of memory: no owner known, so nothing is believed. */
        if (set_owner(o, new_owner) < 0)
                set_owner(o, NULL);
        if (o->changed)
                o->changed(o->userdata);
        return 0;
}

static int on_owner_answered(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusNameOwner *o = userdata;
        const char *owner = NULL;
        o->query = sd_bus_slot_unref(o->query);
        /* An error (NameHasNoOwner) leaves it unknown: a change is signalled. */
        if (!sd_bus_message_is_method_error(m, NULL) && sd_bus_message_read(m, "s", &owner) >= 0)
                (void) set_owner(o, owner);
        return 0;
}

int bus_name_owner_watch(BusNameOwner *o, sd_bus *bus, const char *name) {
        return bus_name_owner_watch_full(o, bus, name, NULL, NULL);
}

int bus_name_owner_watch_full(BusNameOwner *o, sd_bus *bus, const char *name, void (*changed)(void *userdata),
                              void *userdata) {
        *o = (BusNameOwner) { .bus = bus, .name = strdup(name), .changed = changed, .userdata = userdata };
        if (!o->name)
                return -ENOMEM;
        if (sd_bus_is_bus_client(bus) <= 0)
                return 0; /* the service's own connection: nothing to follow */
        char rule[512];
        int n = snprintf(rule, sizeof rule,
                         "type='signal',sender='" BUS_DRIVER_NAME "',path='/org/freedesktop/DBus',"
                         "interface='" BUS_DRIVER_NAME "',member='NameOwnerChanged',arg0='%s'",
                         name);
        if (n < 0 || (size_t) n >= sizeof rule)
                return -EINVAL;
        int r = sd_bus_add_match_async(bus, &o->match, rule, on_owner_changed, NULL, o);
        if (r >= 0)
                r = sd_bus_call_method_async(bus, &o->query, BUS_DRIVER_NAME, "/org/freedesktop/DBus", BUS_DRIVER_NAME,
                                             "GetNameOwner", on_owner_answered, o, "s", name);
        if (r < 0)
                bus_name_owner_done(o);
        return r;
}

bool bus_name_owner_sent(const BusNameOwner *o, sd_bus_message *m) {
        if (sd_bus_message_get_bus(m) != o->bus)
                return false;
        if (sd_bus_is_bus_client(o->bus) <= 0)
                return true;
        return same(sd_bus_message_get_sender(m), o->owner);
}

void bus_name_owner_done(BusNameOwner *o) {
        o->match = sd_bus_slot_unref(o->match);
        o->query = sd_bus_slot_unref(o->query);
        free(o->owner);
        free(o->name);
        o->owner = o->name = NULL;
        o->bus = NULL;
}
