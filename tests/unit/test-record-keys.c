/* SPDX-License-Identifier: MIT */
/* The record's key tables and Launch's option table: what bgrund sends and
 * bgrun reads by, so a slip here is a slip on both sides at once. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <systemd/sd-bus.h>

#include "launch-options.h"
#include "macro.h"
#include "record-keys.h"

typedef struct Table {
        const char *what;
        const KeyInfo *keys;
        size_t n;
} Table;

static const Table tables[] = {
        { "record", record_keys, _RECORD_KEY_MAX },
        { "containment", containment_keys, _CONTAINMENT_KEY_MAX },
        { "teardown", teardown_keys, _TEARDOWN_KEY_MAX },
        { "kill", kill_keys, _KILL_KEY_MAX },
        { "reap", reap_keys, _REAP_KEY_MAX },
};

/* sd-bus has no public signature check, but opening a variant checks that
 * its contents are one complete type, which is what a value in an a{sv}
 * must be. sd-bus makes messages only for a started bus: start one on a
 * socketpair that nobody answers. */
static bool signature_is_single_type(const char *signature) {
        _cleanup_close_ int fd0 = -EBADF, fd1 = -EBADF;
        sd_bus_message *m = NULL;
        sd_bus *bus = NULL;
        int s[2], r;

        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
        fd0 = s[0];
        fd1 = s[1];
        cr_assert_geq(sd_bus_new(&bus), 0);
        cr_assert_geq(sd_bus_set_fd(bus, fd0, fd0), 0);
        fd0 = -EBADF; /* the bus' now */
        cr_assert_geq(sd_bus_start(bus), 0);
        cr_assert_geq(sd_bus_message_new_method_call(bus, &m, "org.example.Test", "/", "org.example.Test", "T"),
                      0);

        r = sd_bus_message_open_container(m, 'v', signature);

        sd_bus_message_unref(m);
        sd_bus_close_unref(bus);
        return r >= 0;
}

Test(record_keys, the_signature_check_can_fail) {
        const char *bad[] = { "", "a", "a{", "{sv}", "a{vs}", "ss", "(s", "z", "a{sv}s" };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_assert_not(signature_is_single_type(bad[i]), "'%s' taken for one complete type", bad[i]);
        cr_assert(signature_is_single_type("a{sv}"));
        cr_assert(signature_is_single_type("t"));
}

Test(record_keys, names_are_unique_and_signatures_valid) {
        for (size_t t = 0; t < ELEMENTSOF(tables); t++) {
                const Table *tb = &tables[t];

                cr_assert_gt(tb->n, 0);
                for (size_t i = 0; i < tb->n; i++) {
                        const KeyInfo *k = &tb->keys[i];

                        cr_assert_not_null(k->name, "%s key %zu", tb->what, i);
                        cr_assert_neq(k->name[0], '\0', "%s key %zu", tb->what, i);
                        cr_assert(signature_is_single_type(k->signature), "%s.%s: signature '%s'", tb->what,
                                  k->name, k->signature);
                        for (size_t j = 0; j < i; j++)
                                cr_assert_str_neq(tb->keys[j].name, k->name, "%s: '%s' twice", tb->what, k->name);

                        /* A key is found where it is. */
                        cr_assert_eq(key_lookup(tb->keys, tb->n, k->name), (int) i, "%s.%s", tb->what, k->name);
                }
                cr_assert_eq(key_lookup(tb->keys, tb->n, "no such key"), -ENOENT);
                cr_assert_eq(key_lookup(tb->keys, tb->n, ""), -ENOENT);
        }
}

Test(record_keys, the_enums_name_their_keys) {
        /* The X-macro lists turned into enum and table in the same order. */
        cr_assert_str_eq(record_keys[RECORD_KEY_ID].name, "id");
        cr_assert_str_eq(record_keys[RECORD_KEY_STATUS].name, "status");
        cr_assert_str_eq(record_keys[RECORD_KEY_STATUS].signature, "s");
        cr_assert_str_eq(record_keys[RECORD_KEY_EXIT_CODE].signature, "i");
        cr_assert_str_eq(record_keys[RECORD_KEY_OUTPUT_BYTES].name, "output_bytes");
        cr_assert_str_eq(record_keys[RECORD_KEY_OUTPUT_BYTES].signature, "t");
        cr_assert_str_eq(containment_keys[CONTAINMENT_KEY_CGROUP].name, "cgroup");
        cr_assert_str_eq(teardown_keys[TEARDOWN_KEY_CONFIRMED_AT].name, "confirmed_at");
        cr_assert_str_eq(kill_keys[KILL_KEY_KILLED].signature, "b");
        cr_assert_str_eq(reap_keys[REAP_KEY_ORPHANS_KILLED].name, "orphans_killed");
        cr_assert_str_eq(reap_keys[REAP_KEY_ORPHANS_KILLED].signature, "u");
}

Test(record_keys, nested_dictionaries_are_dictionaries) {
        /* bgrun reads these as nested a{sv}, through their own tables. */
        cr_assert_str_eq(record_keys[RECORD_KEY_CONTAINMENT].signature, "a{sv}");
        cr_assert_str_eq(record_keys[RECORD_KEY_TEARDOWN].signature, "a{sv}");
        cr_assert_str_eq(kill_keys[KILL_KEY_TEARDOWN].signature, "a{sv}");
        /* Kill's answer carries the record's teardown dictionary, by the same name. */
        cr_assert_str_eq(kill_keys[KILL_KEY_TEARDOWN].name, record_keys[RECORD_KEY_TEARDOWN].name);
}

Test(record_keys, launch_options_are_unique_and_valid) {
        for (size_t i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];

                cr_assert_not_null(o->name);
                cr_assert_neq(o->name[0], '\0');
                cr_assert(signature_is_single_type(o->signature), "%s: signature '%s'", o->name, o->signature);
                for (size_t j = 0; j < i; j++)
                        cr_assert_str_neq(launch_options[j].name, o->name, "'%s' twice", o->name);
        }
        /* seen is a bit mask of them. */
        cr_assert_leq(_LAUNCH_OPTION_MAX, sizeof(((LaunchOptions *) NULL)->seen) * 8);
}
