/* SPDX-License-Identifier: MIT */
/* The D-Bus → JSON reader, on messages built here: no bus daemon, only a
 * bus object started on one end of a socketpair (sd-bus makes messages only
 * for a bus that was started), sealed and rewound as if received. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bus-fixture.h"
#include "bus-json.h"
#include "macro.h"

TestSuite(bus_json, .init = bus_fixture_setup, .fini = bus_fixture_teardown);

static sd_bus_message *new_message(void) {
        return bus_fixture_message();
}

static void seal(sd_bus_message *m) {
        bus_fixture_seal(m);
}

static const char *plain(json_object *j) {
        return json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Reads one value of m and checks its JSON text. */
static void expect_json(sd_bus_message *m, const char *want) {
        json_object *j = NULL;
        int r = bus_json_read(m, &j);

        cr_assert_eq(r, 1, "bus_json_read() = %d (%s)", r, strerror(-r));
        cr_assert_not_null(j);
        cr_assert_str_eq(plain(j), want);
        json_object_put(j);
}

Test(bus_json, record_like_dictionary_keeps_order_and_types) {
        sd_bus_message *m = new_message();

        /* Keys deliberately not in alphabetical order: the order sent is kept. */
        cr_assert_geq(sd_bus_message_append(m, "a{sv}", 6,
                                            "status", "s", "exited",
                                            "exit_code", "i", (int32_t) -1,
                                            "timed_out", "b", 0,
                                            "owner", "u", (uint32_t) UINT32_MAX,
                                            "finished_at", "t", (uint64_t) UINT64_MAX,
                                            "containment", "a{sv}", 2,
                                                    "contained", "b", 1,
                                                    "cgroup", "s", "/a \"quoted\"/b"),
                      0);
        seal(m);
        expect_json(m,
                    "{\"status\":\"exited\",\"exit_code\":-1,\"timed_out\":false,\"owner\":4294967295,"
                    "\"finished_at\":18446744073709551615,"
                    "\"containment\":{\"contained\":true,\"cgroup\":\"/a \\\"quoted\\\"/b\"}}");
        sd_bus_message_unref(m);
}

Test(bus_json, every_basic_type) {
        sd_bus_message *m = new_message();

        cr_assert_geq(sd_bus_message_append(m, "ybnqiuxtdsog",
                                            (uint8_t) 255, 1, (int16_t) INT16_MIN, (uint16_t) UINT16_MAX,
                                            (int32_t) INT32_MIN, (uint32_t) 7, (int64_t) INT64_MIN,
                                            (uint64_t) 0, 1.5, "text", "/org/x", "a{sv}"),
                      0);
        seal(m);
        expect_json(m, "255");
        expect_json(m, "true");
        expect_json(m, "-32768");
        expect_json(m, "65535");
        expect_json(m, "-2147483648");
        expect_json(m, "7");
        expect_json(m, "-9223372036854775808");
        expect_json(m, "0");
        expect_json(m, "1.5");
        expect_json(m, "\"text\"");
        expect_json(m, "\"/org/x\"");
        expect_json(m, "\"a{sv}\"");
        sd_bus_message_unref(m);
}

Test(bus_json, arrays_structs_and_other_dictionaries) {
        sd_bus_message *m = new_message();

        cr_assert_geq(sd_bus_message_append(m, "as", 2, "A=1", "B=2"), 0);
        cr_assert_geq(sd_bus_message_append(m, "ay", 3, (uint8_t) 1, (uint8_t) 2, (uint8_t) 3), 0);
        cr_assert_geq(sd_bus_message_append(m, "(sub)", "x", (uint32_t) 5, 1), 0);
        cr_assert_geq(sd_bus_message_append(m, "a(sssso)", 1, "id", "s", "running", "cmd", "/j/1"), 0);
        cr_assert_geq(sd_bus_message_append(m, "a{us}", 2, (uint32_t) 2, "two", (uint32_t) 1, "one"), 0);
        cr_assert_geq(sd_bus_message_append(m, "a{ss}", 1, "k", "v"), 0);
        cr_assert_geq(sd_bus_message_append(m, "a{oas}", 1, "/p", 1, "e"), 0);
        cr_assert_geq(sd_bus_message_append(m, "a{sv}", 0), 0);
        cr_assert_geq(sd_bus_message_append(m, "as", 0), 0);
        cr_assert_geq(sd_bus_message_append(m, "v", "v", "u", (uint32_t) 9), 0);
        seal(m);
        expect_json(m, "[\"A=1\",\"B=2\"]");
        expect_json(m, "[1,2,3]");
        expect_json(m, "[\"x\",5,true]");
        expect_json(m, "[[\"id\",\"s\",\"running\",\"cmd\",\"/j/1\"]]");
        expect_json(m, "[[2,\"two\"],[1,\"one\"]]");
        expect_json(m, "{\"k\":\"v\"}");
        expect_json(m, "{\"/p\":[\"e\"]}");
        expect_json(m, "{}");
        expect_json(m, "[]");
        expect_json(m, "9");
        sd_bus_message_unref(m);
}

Test(bus_json, a_key_sent_twice_keeps_its_place_and_the_last_value) {
        sd_bus_message *m = new_message();

        cr_assert_geq(sd_bus_message_append(m, "a{sv}", 3, "a", "u", (uint32_t) 1, "b", "s", "x", "a", "s", "again"),
                      0);
        seal(m);
        expect_json(m, "{\"a\":\"again\",\"b\":\"x\"}");
        sd_bus_message_unref(m);
}

Test(bus_json, end_of_message_and_of_container) {
        sd_bus_message *m = new_message();
        json_object *j = (json_object *) 0x1;

        cr_assert_geq(sd_bus_message_append(m, "as", 1, "only"), 0);
        seal(m);

        cr_assert_eq(sd_bus_message_enter_container(m, 'a', "s"), 1);
        expect_json(m, "\"only\"");
        cr_assert_eq(bus_json_read(m, &j), 0);
        cr_assert_eq(j, (json_object *) 0x1, "ret touched at the end of a container");
        cr_assert_geq(sd_bus_message_exit_container(m), 0);

        cr_assert_eq(bus_json_read(m, &j), 0);
        cr_assert_eq(j, (json_object *) 0x1, "ret touched at the end of the message");

        cr_assert_eq(bus_json_read(NULL, &j), -EINVAL);
        cr_assert_eq(bus_json_read(m, NULL), -EINVAL);
        sd_bus_message_unref(m);
}

Test(bus_json, a_descriptor_is_refused) {
        sd_bus_message *m = new_message();
        json_object *j = NULL;
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        cr_assert_geq(sd_bus_message_append(m, "a{sv}", 1, "fd", "h", fd), 0);
        close(fd);
        seal(m);
        cr_assert_eq(bus_json_read(m, &j), -EOPNOTSUPP);
        cr_assert_null(j);
        sd_bus_message_unref(m);
}

/* depth variants, one inside the other, around a u. */
static sd_bus_message *nested_variants(unsigned depth) {
        sd_bus_message *m = new_message();

        for (unsigned i = 1; i < depth; i++)
                cr_assert_geq(sd_bus_message_open_container(m, 'v', "v"), 0);
        cr_assert_geq(sd_bus_message_append(m, "v", "u", (uint32_t) 42), 0);
        for (unsigned i = 1; i < depth; i++)
                cr_assert_geq(sd_bus_message_close_container(m), 0);
        seal(m);
        return m;
}

Test(bus_json, nesting_up_to_the_limit_is_read) {
        sd_bus_message *m = nested_variants(BUS_JSON_DEPTH_MAX);

        expect_json(m, "42");
        sd_bus_message_unref(m);
}

Test(bus_json, nesting_beyond_the_limit_is_refused) {
        /* sd-bus itself reads 128 deep: the refusal is ours. */
        unsigned depths[] = { BUS_JSON_DEPTH_MAX + 1, 100, 128 };

        for (size_t i = 0; i < ELEMENTSOF(depths); i++) {
                sd_bus_message *m = nested_variants(depths[i]);
                json_object *j = NULL;

                cr_assert_eq(bus_json_read(m, &j), -ELNRNG, "depth %u", depths[i]);
                cr_assert_null(j);
                sd_bus_message_unref(m);
        }
}

/* a{sv} inside a{sv}, levels deep (3 containers a level: a, e, v), around
 * an innermost a{su} that is empty or holds one entry (a u, no variant: so
 * the entry is the last container). */
static sd_bus_message *nested_dicts(unsigned levels, bool innermost_entry) {
        sd_bus_message *m = new_message();

        for (unsigned i = 0; i < levels; i++) {
                cr_assert_geq(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
                cr_assert_geq(sd_bus_message_open_container(m, 'e', "sv"), 0);
                cr_assert_geq(sd_bus_message_append_basic(m, 's', "k"), 0);
                cr_assert_geq(sd_bus_message_open_container(m, 'v', i + 1 < levels ? "a{sv}" : "a{su}"), 0);
        }
        if (innermost_entry)
                cr_assert_geq(sd_bus_message_append(m, "a{su}", 1, "u", (uint32_t) 1), 0);
        else
                cr_assert_geq(sd_bus_message_append(m, "a{su}", 0), 0);
        for (unsigned i = 0; i < levels; i++)
                for (int k = 0; k < 3; k++)
                        cr_assert_geq(sd_bus_message_close_container(m), 0);
        seal(m);
        return m;
}

static int read_and_free(sd_bus_message *m) {
        json_object *j = NULL;
        int r = bus_json_read(m, &j);

        cr_assert((r == 1) == (j != NULL));
        json_object_put(j);
        sd_bus_message_unref(m);
        return r;
}

Test(bus_json, nested_dictionaries_count_every_container) {
        /* 21 levels and an empty innermost a{su}: 64 containers. */
        cr_assert_eq(read_and_free(nested_dicts(21, false)), 1);
        /* The innermost entry is the 65th: refused, though its value is no container. */
        cr_assert_eq(read_and_free(nested_dicts(21, true)), -ELNRNG);
        cr_assert_eq(read_and_free(nested_dicts(20, true)), 1);
        cr_assert_eq(read_and_free(nested_dicts(22, false)), -ELNRNG);
}

Test(bus_json, types_by_signature) {
        json_object *big = json_object_new_uint64(UINT64_MAX);
        json_object *i32max1 = json_object_new_int64((int64_t) INT32_MAX + 1);
        json_object *minus = json_object_new_int(-1);
        json_object *zero = json_object_new_int(0);
        json_object *str = json_object_new_string("x");
        json_object *b = json_object_new_boolean(1);
        json_object *obj = json_object_new_object();
        json_object *arr = json_object_new_array();
        json_object *dbl = json_object_new_double(0.5);

        cr_assert(bus_json_is_type(big, "t"));
        cr_assert_not(bus_json_is_type(big, "x"));
        cr_assert_not(bus_json_is_type(big, "u"));
        cr_assert(bus_json_is_type(i32max1, "u"));
        cr_assert(bus_json_is_type(i32max1, "x"));
        cr_assert_not(bus_json_is_type(i32max1, "i"));
        cr_assert(bus_json_is_type(minus, "i"));
        cr_assert(bus_json_is_type(minus, "n"));
        cr_assert_not(bus_json_is_type(minus, "u"));
        cr_assert_not(bus_json_is_type(minus, "t"));
        cr_assert_not(bus_json_is_type(minus, "y"));
        cr_assert(bus_json_is_type(zero, "y"));
        cr_assert_not(bus_json_is_type(zero, "b"));
        cr_assert_not(bus_json_is_type(zero, "s"));
        cr_assert(bus_json_is_type(str, "s"));
        cr_assert(bus_json_is_type(str, "o"));
        cr_assert_not(bus_json_is_type(str, "t"));
        cr_assert(bus_json_is_type(b, "b"));
        cr_assert_not(bus_json_is_type(b, "i"));
        cr_assert(bus_json_is_type(obj, "a{sv}"));
        cr_assert(bus_json_is_type(obj, "a{ss}"));
        cr_assert_not(bus_json_is_type(obj, "as"));
        cr_assert_not(bus_json_is_type(obj, "a{us}"));
        cr_assert(bus_json_is_type(arr, "as"));
        cr_assert(bus_json_is_type(arr, "(su)"));
        cr_assert(bus_json_is_type(arr, "a{us}"));
        cr_assert_not(bus_json_is_type(arr, "a{sv}"));
        cr_assert(bus_json_is_type(dbl, "d"));
        cr_assert_not(bus_json_is_type(dbl, "t"));
        cr_assert(bus_json_is_type(dbl, "v"));
        cr_assert_not(bus_json_is_type(str, "h"));
        cr_assert_not(bus_json_is_type(str, ""));
        cr_assert_not(bus_json_is_type(NULL, "s"));
        cr_assert_not(bus_json_is_type(str, NULL));

        json_object_object_add(obj, "n", json_object_get(minus));
        json_object_object_add(obj, "s", json_object_get(str));
        cr_assert_eq(bus_json_get(obj, "n", "i"), minus);
        cr_assert_null(bus_json_get(obj, "n", "u"));
        cr_assert_eq(bus_json_get(obj, "s", "s"), str);
        cr_assert_null(bus_json_get(obj, "s", "b"));
        cr_assert_null(bus_json_get(obj, "missing", "s"));
        cr_assert_null(bus_json_get(arr, "s", "s"));
        cr_assert_null(bus_json_get(NULL, "s", "s"));

        json_object *all[] = { big, i32max1, minus, zero, str, b, obj, arr, dbl };
        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                json_object_put(all[i]);
}
