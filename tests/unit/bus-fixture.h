/* SPDX-License-Identifier: MIT */
#pragma once

/* For unit tests of code that reads or builds D-Bus messages: no bus
 * daemon, only a bus object started on one end of a socketpair (sd-bus
 * makes messages only for a bus that was started). A test builds a method
 * call with bus_fixture_message(), fills it, and bus_fixture_seal()s it to
 * read it back as if it was received. Use as TestSuite(NAME, .init =
 * bus_fixture_setup, .fini = bus_fixture_teardown). */

#include <criterion/criterion.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "macro.h"

static sd_bus *bus;
static int bus_fixture_peer = -EBADF;

static inline void bus_fixture_setup(void) {
        int s[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
        bus_fixture_peer = s[1];
        cr_assert_geq(sd_bus_new(&bus), 0);
        cr_assert_geq(sd_bus_set_fd(bus, s[0], s[0]), 0);
        cr_assert_geq(sd_bus_start(bus), 0);
}

static inline void bus_fixture_teardown(void) {
        bus = sd_bus_close_unref(bus); /* no flush: nobody answers the auth */
        bus_fixture_peer = safe_close(bus_fixture_peer);
}

static inline sd_bus_message *bus_fixture_message(void) {
        sd_bus_message *m = NULL;
        cr_assert_geq(sd_bus_message_new_method_call(bus, &m, "org.example.Test", "/org/example/Test",
                                                     "org.example.Test", "Test"), 0);
        return m;
}

/* As the receiver sees it. */
static inline void bus_fixture_seal(sd_bus_message *m) {
        cr_assert_geq(sd_bus_message_seal(m, 1, 0), 0);
        cr_assert_geq(sd_bus_message_rewind(m, true), 0);
}
