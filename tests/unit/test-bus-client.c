/* SPDX-License-Identifier: MIT */
/* The registry of callers (dbus/bus-client.c), with no bus: a connection's
 * identity is kept in its record; records that hold nothing else are kept
 * among the last BUS_IDLE_CLIENTS_MAX only, the oldest forgotten first; a
 * record that holds something is never forgotten for that, and rejoins the
 * idle ones, newest, once it holds nothing. The sanitizer build runs this
 * too: no leak. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "bus-client.h"
#include "bus-service.h"

static BusService service;

static void teardown(void) {
        bus_clients_free(&service);
        service = (BusService) {};
}

TestSuite(bus_client, .fini = teardown);

static const char *name_of(unsigned i) {
        static char name[32];
        snprintf(name, sizeof name, ":1.%u", i);
        return name;
}

static bool known(unsigned i, uid_t *ret_uid) {
        uid_t uid;
        pid_t pid;
        bool k = bus_client_identity(&service, name_of(i), &uid, &pid);
        if (k && ret_uid)
                *ret_uid = uid;
        return k;
}

Test(bus_client, an_identity_is_kept_in_its_record) {
        uid_t uid = 0;
        cr_assert(!known(7, NULL));
        bus_client_identified(&service, NULL, name_of(7), 1000, 4242);
        cr_assert(known(7, &uid));
        cr_assert_eq(uid, 1000);
        pid_t pid = 0;
        cr_assert(bus_client_identity(&service, ":1.7", &uid, &pid));
        cr_assert_eq(pid, 4242);
        cr_assert(!known(70, NULL));
        BusClient *c = bus_client_find(&service, ":1.7");
        cr_assert_not_null(c);
        cr_assert(c->identified);
        /* It leaves: nothing of it is known any more. */
        bus_client_gone(c);
        cr_assert(!known(7, NULL));
        cr_assert_null(bus_client_find(&service, ":1.7"));
}

/* A flood of connections that only call pins nothing: past the bound, the
 * oldest identities are forgotten (their next call asks again). */
Test(bus_client, idle_records_are_bounded) {
        enum { N = BUS_IDLE_CLIENTS_MAX + 300 };
        for (unsigned i = 0; i < N; i++)
                bus_client_identified(&service, NULL, name_of(i), 1000 + i, 1);
        cr_assert_eq(service.n_idle_clients, BUS_IDLE_CLIENTS_MAX);
        for (unsigned i = 0; i < N; i++)
                cr_assert_eq(known(i, NULL), i >= N - BUS_IDLE_CLIENTS_MAX, "%s", name_of(i));
}

/* A record that holds something (here a waiting call) is not forgotten
 * however many others come, and once it holds nothing it is the newest of
 * the idle ones. */
Test(bus_client, a_record_that_holds_something_is_not_forgotten) {
        bus_client_identified(&service, NULL, name_of(0), 1000, 1);
        BusClient *held = bus_client_find(&service, name_of(0));
        cr_assert_not_null(held);
        bus_client_count_pending(held, +1);
        for (unsigned i = 1; i <= 2 * BUS_IDLE_CLIENTS_MAX; i++)
                bus_client_identified(&service, NULL, name_of(i), 1000, 1);
        cr_assert(known(0, NULL), "held: kept");
        cr_assert(!known(1, NULL), "idle and oldest: forgotten");
        bus_client_count_pending(held, -1);
        bus_client_release(held);
        cr_assert(known(0, NULL), "released: kept for its identity, the newest");
        cr_assert_eq(service.n_idle_clients, BUS_IDLE_CLIENTS_MAX);
        for (unsigned i = 0; i < BUS_IDLE_CLIENTS_MAX - 1; i++)
                bus_client_identified(&service, NULL, name_of(10000 + i), 1000, 1);
        cr_assert(known(0, NULL), "still among the last %d", BUS_IDLE_CLIENTS_MAX);
        bus_client_identified(&service, NULL, name_of(20000), 1000, 1);
        cr_assert(!known(0, NULL), "now the oldest: forgotten");
}
