/* SPDX-License-Identifier: MIT */
/* The bus daemon's methods on a --listen connection (listen-bus-daemon.h
 * says which and what they answer). Their answers come from
 * org.freedesktop.DBus, as a bus daemon's; everything else bgrund sends
 * comes from BUS_LISTEN_OWNER. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listen-bus-daemon.h"
#include "listen-limits.h"
#include "macro.h"
#include "map.h"

#define DBUS_NAME "org.freedesktop.DBus"
#define ANSWERED "Hello, GetNameOwner, NameHasOwner, AddMatch, RemoveMatch and GetId"

static int reply(sd_bus_message *m, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *r = NULL;
        int k = sd_bus_message_new_method_return(m, &r);
        if (k >= 0)
                k = sd_bus_message_set_sender(r, DBUS_NAME);
        if (k >= 0 && types) {
                va_list ap;
                va_start(ap, types);
                k = sd_bus_message_appendv(r, types, ap);
                va_end(ap);
        }
        return k < 0 ? k : sd_bus_send(NULL, r, NULL);
}

_printf_(3, 4) static int reply_error(sd_bus_message *m, const char *name, const char *format, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *r = NULL;
        char text[512];
        va_list ap;
        va_start(ap, format);
        (void) vsnprintf(text, sizeof text, format, ap);
        va_end(ap);
        int k = sd_bus_message_new_method_errorf(m, &r, name, "%s", text);
        if (k >= 0)
                k = sd_bus_message_set_sender(r, DBUS_NAME);
        return k < 0 ? k : sd_bus_send(NULL, r, NULL);
}

/* The owner of name as this connection sees the bus, or NULL. */
static const char *name_owner(ListenConnection *c, const char *name) {
        if (streq(name, DBUS_NAME))
                return DBUS_NAME;
        if (streq(name, "org.bgrun.Runtime1") || streq(name, BUS_LISTEN_OWNER))
                return BUS_LISTEN_OWNER;
        if (streq(name, c->name))
                return c->name;
        return NULL;
}

static int method_hello(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        return reply(m, "s", c->name);
}

static int method_get_name_owner(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name, *owner;
        int r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        owner = name_owner(userdata, name);
        if (!owner)
                return reply_error(m, "org.freedesktop.DBus.Error.NameHasNoOwner",
                                   "Could not get owner of name '%s': no such name (this is bgrund --listen, "
                                   "where only org.bgrun.Runtime1 is served)",
                                   name);
        return reply(m, "s", owner);
}

static int method_name_has_owner(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name;
        int r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        return reply(m, "b", (int) !!name_owner(userdata, name));
}

/* A rule by its hash, the maps' keyed one: two rules that collide are one
 * rule to RemoveMatch, harmless where rules select nothing, and a caller
 * cannot choose rules that do. */
static uint64_t rule_hash(const char *rule) {
        return map_hash_string(rule);
}

static int method_add_match(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        const char *rule;
        int r = sd_bus_message_read(m, "s", &rule);
        if (r < 0)
                return r;
        if (strlen(rule) > BUS_LISTEN_MATCH_RULE_LENGTH_MAX)
                return reply_error(m, "org.freedesktop.DBus.Error.MatchRuleInvalid",
                                   "A match rule is %u bytes at most, this one is %zu",
                                   BUS_LISTEN_MATCH_RULE_LENGTH_MAX, strlen(rule));
        if (c->n_matches >= BUS_LISTEN_MATCH_RULES_MAX)
                return reply_error(m, "org.freedesktop.DBus.Error.LimitsExceeded",
                                   "This connection has %u match rules, the most bgrund keeps for one",
                                   c->n_matches);
        if (c->n_matches == c->n_matches_allocated) {
                unsigned n = c->n_matches_allocated ? c->n_matches_allocated * 2 : 8;
                uint64_t *a = reallocarray(c->matches, n, sizeof(uint64_t));
                if (!a)
                        return -ENOMEM;
                c->matches = a;
                c->n_matches_allocated = n;
        }
        c->matches[c->n_matches++] = rule_hash(rule);
        return reply(m, NULL);
}

static int method_remove_match(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        const char *rule;
        int r = sd_bus_message_read(m, "s", &rule);
        if (r < 0)
                return r;
        uint64_t h = rule_hash(rule);
        for (unsigned i = 0; i < c->n_matches; i++)
                if (c->matches[i] == h) {
                        c->matches[i] = c->matches[--c->n_matches];
                        return reply(m, NULL);
                }
        return reply_error(m, "org.freedesktop.DBus.Error.MatchRuleNotFound",
                           "The connection has no match rule \"%s\"", rule);
}

static int method_get_id(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        char id[SD_ID128_STRING_MAX];
        return reply(m, "s", sd_id128_to_string(c->listen->server_id, id));
}

static const sd_bus_vtable bus_daemon_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Hello", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", name), method_hello,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetNameOwner", SD_BUS_ARGS("s", name), SD_BUS_RESULT("s", owner),
                                method_get_name_owner, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("NameHasOwner", SD_BUS_ARGS("s", name), SD_BUS_RESULT("b", has_owner),
                                method_name_has_owner, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AddMatch", SD_BUS_ARGS("s", rule), SD_BUS_NO_RESULT, method_add_match,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveMatch", SD_BUS_ARGS("s", rule), SD_BUS_NO_RESULT, method_remove_match,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetId", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", id), method_get_id,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

/* The bus daemon's other methods (ListNames, RequestName...): an answer
 * that says this is no bus daemon, and what it answers. */
static int unknown_filter(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        static const char *const answered[] = { "Hello",    "GetNameOwner", "NameHasOwner",
                                                "AddMatch", "RemoveMatch",  "GetId" };
        if (!sd_bus_message_is_method_call(m, DBUS_NAME, NULL))
                return 0;
        const char *member = sd_bus_message_get_member(m);
        for (size_t i = 0; i < ELEMENTSOF(answered); i++)
                if (member && streq(member, answered[i]))
                        return 0;
        (void) reply_error(m, "org.freedesktop.DBus.Error.UnknownMethod",
                           "bgrund --listen is no bus daemon: of org.freedesktop.DBus's methods it answers " ANSWERED
                           ", not %s",
                           member ?: "(none)");
        return 1;
}

int listen_bus_daemon_attach(ListenConnection *c) {
        int r = sd_bus_set_sender(c->bus, BUS_LISTEN_OWNER);
        if (r >= 0)
                r = sd_bus_add_filter(c->bus, NULL, unknown_filter, c);
        if (r >= 0)
                r = sd_bus_add_object_vtable(c->bus, NULL, "/org/freedesktop/DBus", DBUS_NAME, bus_daemon_vtable, c);
        return r;
}

void listen_bus_daemon_detach(ListenConnection *c) {
        free(c->matches);
        c->matches = NULL;
        c->n_matches = c->n_matches_allocated = 0;
}
