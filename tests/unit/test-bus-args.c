/* SPDX-License-Identifier: MIT */
/* The readers of callers' arguments (bus-args.c) on messages built here, as
 * test-bus-json.c builds them: what they refuse, and that a refusal stops
 * where it was decided (the value of a refused key, the rest of an
 * over-long array, are never read). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bgrun/bus-api.h"
#include "bus-args.h"
#include "bus-fixture.h"
#include "macro.h"

TestSuite(bus_args, .init = bus_fixture_setup, .fini = bus_fixture_teardown);

/* A call holding an a{sv} of options, opened for the test to fill. */
static sd_bus_message *new_message(void) {
        sd_bus_message *m = bus_fixture_message();
        cr_assert_geq(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
        return m;
}

static void seal(sd_bus_message *m) {
        cr_assert_geq(sd_bus_message_close_container(m), 0);
        bus_fixture_seal(m);
}

/* An entry {key: as} of n strings "E<i>=x". */
static void append_strv(sd_bus_message *m, const char *key, unsigned n) {
        cr_assert_geq(sd_bus_message_open_container(m, 'e', "sv"), 0);
        cr_assert_geq(sd_bus_message_append_basic(m, 's', key), 0);
        cr_assert_geq(sd_bus_message_open_container(m, 'v', "as"), 0);
        cr_assert_geq(sd_bus_message_open_container(m, 'a', "s"), 0);
        for (unsigned i = 0; i < n; i++) {
                char e[32];
                snprintf(e, sizeof e, "E%u=x", i);
                cr_assert_geq(sd_bus_message_append_basic(m, 's', e), 0);
        }
        cr_assert_geq(sd_bus_message_close_container(m), 0);
        cr_assert_geq(sd_bus_message_close_container(m), 0);
        cr_assert_geq(sd_bus_message_close_container(m), 0);
}

static void expect_refused(sd_bus_message *m, int (*reader)(sd_bus_message *, LaunchOptions *, sd_bus_error *),
                           const char *want) {
        _cleanup_(launch_options_done) LaunchOptions o = {};
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = reader(m, &o, &error);
        cr_assert_lt(r, 0);
        cr_assert_str_eq(error.name, BGRUN_ERROR_INVALID_ARGS);
        cr_assert(strstr(error.message, want), "'%s' does not say '%s'", error.message, want);
        sd_bus_error_free(&error);
}

Test(bus_args, launch_options_are_read) {
        sd_bus_message *m = new_message();
        append_strv(m, "Environment", 3);
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "MaxRuntimeUSec", "t", (uint64_t) 5), 0);
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "StopSignal", "i", (int32_t) 2), 0);
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "Tty", "b", 1), 0);
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "TtyRows", "q", (uint16_t) 40), 0);
        seal(m);
        _cleanup_(launch_options_done) LaunchOptions o = {};
        sd_bus_error error = SD_BUS_ERROR_NULL;
        cr_assert_geq(bus_read_launch_options(m, &o, &error), 0);
        cr_assert_str_eq(o.spec.environment[2], "E2=x");
        cr_assert_null(o.spec.environment[3]);
        cr_assert_eq(o.spec.max_runtime_usec, 5);
        cr_assert_eq(o.spec.stop_signal, 2);
        cr_assert_eq(o.spec.stdin_mode, JOB_STDIN_TTY);
        cr_assert_eq(o.spec.tty_rows, 40);
        sd_bus_message_unref(m);
}

/* The value of an unknown key is never read: the reader stops at the key,
 * in front of the variant. */
Test(bus_args, unknown_key_is_refused_before_its_value) {
        sd_bus_message *m = new_message();
        append_strv(m, "NoSuchOption", 50000);
        seal(m);
        expect_refused(m, bus_read_launch_options, "Unknown option 'NoSuchOption'");
        char type;
        const char *contents;
        cr_assert_gt(sd_bus_message_peek_type(m, &type, &contents), 0);
        cr_assert_eq(type, 'v', "the reader went past the key (at '%c')", type);
        sd_bus_message_unref(m);
}

Test(bus_args, wrong_type_is_refused_before_its_value) {
        sd_bus_message *m = new_message();
        append_strv(m, "MemoryMax", 50000);
        seal(m);
        expect_refused(m, bus_read_launch_options, "Option MemoryMax must be of type 't', not 'as'");
        char type;
        cr_assert_gt(sd_bus_message_peek_type(m, &type, NULL), 0);
        cr_assert_eq(type, 'v');
        sd_bus_message_unref(m);
}

Test(bus_args, repeated_key_is_refused_before_its_value) {
        sd_bus_message *m = new_message();
        append_strv(m, "Environment", 1);
        append_strv(m, "Environment", 50000);
        seal(m);
        expect_refused(m, bus_read_launch_options, "Option Environment given more than once");
        char type;
        cr_assert_gt(sd_bus_message_peek_type(m, &type, NULL), 0);
        cr_assert_eq(type, 'v');
        sd_bus_message_unref(m);
}

/* An array past its bound is refused at the first element past it: the
 * next element is the one after that. */
Test(bus_args, long_array_stops_at_its_bound) {
        sd_bus_message *m = new_message();
        append_strv(m, "Environment", LAUNCH_ENVIRONMENT_MAX_ENTRIES + 100);
        seal(m);
        expect_refused(m, bus_read_launch_options, "Environment is too large (more than 1024 entries");
        const char *next;
        cr_assert_gt(sd_bus_message_read_basic(m, 's', &next), 0);
        char want[32];
        snprintf(want, sizeof want, "E%zu=x", LAUNCH_ENVIRONMENT_MAX_ENTRIES + 1);
        cr_assert_str_eq(next, want);
        sd_bus_message_unref(m);
}

Test(bus_args, long_strings_stop_at_the_byte_bound) {
        sd_bus_message *m = new_message();
        cr_assert_geq(sd_bus_message_open_container(m, 'e', "sv"), 0);
        cr_assert_geq(sd_bus_message_append_basic(m, 's', "Environment"), 0);
        cr_assert_geq(sd_bus_message_open_container(m, 'v', "as"), 0);
        cr_assert_geq(sd_bus_message_open_container(m, 'a', "s"), 0);
        char big[64 * 1024];
        memset(big, 'x', sizeof big - 1);
        big[0] = 'A', big[1] = '=', big[sizeof big - 1] = 0;
        for (int i = 0; i < 4; i++)
                cr_assert_geq(sd_bus_message_append_basic(m, 's', big), 0);
        cr_assert_geq(sd_bus_message_close_container(m), 0);
        cr_assert_geq(sd_bus_message_close_container(m), 0);
        cr_assert_geq(sd_bus_message_close_container(m), 0);
        seal(m);
        expect_refused(m, bus_read_launch_options, "131072 bytes");
        const char *next; /* the third string was the one past the bound */
        cr_assert_gt(sd_bus_message_read_basic(m, 's', &next), 0);
        cr_assert_eq(strlen(next), sizeof big - 1);
        cr_assert_eq(sd_bus_message_read_basic(m, 's', &next), 0, "only one string should be left");
        sd_bus_message_unref(m);
}

Test(bus_args, launch_rules_between_options) {
        sd_bus_message *m = new_message();
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "TtyRows", "q", (uint16_t) 40), 0);
        seal(m);
        expect_refused(m, bus_read_launch_options, "need Tty=true");
        sd_bus_message_unref(m);
}

Test(bus_args, stop_options) {
        sd_bus_message *m = new_message();
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "Signal", "i", (int32_t) 9), 0);
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "GraceUSec", "t", (uint64_t) 0), 0);
        seal(m);
        _cleanup_(launch_options_done) LaunchOptions o = {};
        sd_bus_error error = SD_BUS_ERROR_NULL;
        cr_assert_geq(bus_read_stop_options(m, &o, &error), 0);
        cr_assert_eq(o.spec.stop_signal, 9);
        cr_assert(launch_options_given(&o, LAUNCH_OPTION_STOP_GRACE_USEC));
        sd_bus_message_unref(m);

        m = new_message();
        append_strv(m, "Colour", 10);
        seal(m);
        expect_refused(m, bus_read_stop_options, "Unknown Stop option 'Colour' (Signal and GraceUSec are known)");
        sd_bus_message_unref(m);

        m = new_message();
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "Signal", "s", "TERM"), 0);
        seal(m);
        expect_refused(m, bus_read_stop_options, "Stop option Signal must be of type 'i', not 's'");
        sd_bus_message_unref(m);

        /* Launch's options are not Stop's. */
        m = new_message();
        cr_assert_geq(sd_bus_message_append(m, "{sv}", "StopSignal", "i", (int32_t) 9), 0);
        seal(m);
        expect_refused(m, bus_read_stop_options, "Unknown Stop option 'StopSignal'");
        sd_bus_message_unref(m);
}
