/* SPDX-License-Identifier: MIT */
/* -p PROP=VALUE and -E parsed by the shared option table, and Launch's a{sv}
 * as it goes on the bus (built on a bus object that never connects, read
 * back with the shared reader). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bus-json.h"
#include "launch-text.h"
#include "strv.h"
#include "log.h"
#include "macro.h"

static LaunchArgs a;
static sd_bus *bus;
static int peer = -EBADF;

static void setup(void) {
        log_setup("bgrun", LOG_TARGET_CONSOLE);
        cr_redirect_stderr();
}

static void teardown(void) {
        launch_args_done(&a);
        bus = sd_bus_close_unref(bus); /* no flush: nobody answers the auth */
        peer = safe_close(peer);
}

TestSuite(launch_args, .init = setup, .fini = teardown);

static void expect_usage_error(int r, const char *line) {
        char want[512];

        cr_assert_eq(r, -EINVAL, "= %d", r);
        snprintf(want, sizeof want, "bgrun: %s\n", line);
        fflush(stderr);
        cr_assert_stderr_eq_str(want);
}

static uint64_t number(LaunchOption i) {
        cr_assert(launch_args_is_set(&a, i), "%s not set", launch_options[i].name);
        cr_assert_str_eq(a.values[i].signature, launch_options[i].signature);
        return a.values[i].u64;
}

Test(launch_args, unknown_property_lists_the_known_ones) {
        expect_usage_error(launch_args_parse_property(&a, "Foo=1"),
                           "Unknown property 'Foo' (known: MaxRuntimeUSec, MemoryMax, TasksMax, CPUQuotaPerSecUSec, User, StopSignal, StopGraceUSec, RequestId, PrivateNetwork, PrivateTmp, ProtectSystem, ProtectHome, ReadWritePaths, ReadOnlyPaths, InaccessiblePaths, ProtectGit, RestrictAddressFamilies, AllowedDomains, Queue, MaxParallel).");
        cr_assert_eq(a.set, 0);
}

Test(launch_args, environment_is_not_a_property) {
        /* Launch takes it, but -E gives it. */
        expect_usage_error(launch_args_parse_property(&a, "Environment=A=1"),
                           "Unknown property 'Environment' (known: MaxRuntimeUSec, MemoryMax, TasksMax, CPUQuotaPerSecUSec, User, StopSignal, StopGraceUSec, RequestId, PrivateNetwork, PrivateTmp, ProtectSystem, ProtectHome, ReadWritePaths, ReadOnlyPaths, InaccessiblePaths, ProtectGit, RestrictAddressFamilies, AllowedDomains, Queue, MaxParallel).");
}

Test(launch_args, property_without_value) {
        expect_usage_error(launch_args_parse_property(&a, "MemoryMax"),
                           "Invalid property assignment 'MemoryMax', expected PROP=VALUE.");
}

Test(launch_args, property_without_name) {
        expect_usage_error(launch_args_parse_property(&a, "=1G"),
                           "Invalid property assignment '=1G', expected PROP=VALUE.");
}

Test(launch_args, memory_max) {
        cr_assert_eq(launch_args_parse_property(&a, "MemoryMax=1G"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_MEMORY_MAX), UINT64_C(1) << 30);
        cr_assert_eq(launch_args_parse_property(&a, "MemoryMax=infinity"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_MEMORY_MAX), UINT64_MAX);
        expect_usage_error(launch_args_parse_property(&a, "MemoryMax=1X"),
                           "Invalid MemoryMax '1X' (bytes, with optional K, M, G, T suffix, or 'infinity').");
        /* A refused value leaves the one before. */
        cr_assert_eq(number(LAUNCH_OPTION_MEMORY_MAX), UINT64_MAX);
}

Test(launch_args, private_network) {
        cr_assert_eq(launch_args_parse_property(&a, "PrivateNetwork=yes"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_PRIVATE_NETWORK), 1);
        cr_assert_eq(launch_args_parse_property(&a, "PrivateNetwork=False"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_PRIVATE_NETWORK), 0);
        expect_usage_error(launch_args_parse_property(&a, "PrivateNetwork=maybe"),
                           "Invalid PrivateNetwork 'maybe' (yes or no).");
}

/* A CHOICE goes as written (bgrund names the words); paths as systemd-run
 * takes them: separated by spaces, -p again adds, an empty one empties. */
Test(launch_args, sandbox_words_and_paths) {
        cr_assert_eq(launch_args_parse_property(&a, "ProtectSystem=strict"), 0);
        cr_assert_str_eq(a.values[LAUNCH_OPTION_PROTECT_SYSTEM].str, "strict");
        cr_assert_eq(launch_args_parse_property(&a, "ReadWritePaths=/src  -/cache"), 0);
        cr_assert_eq(launch_args_parse_property(&a, "ReadWritePaths=/out"), 0);
        char *const *l = a.values[LAUNCH_OPTION_READ_WRITE_PATHS].strv;
        cr_assert_eq(strv_length(l), 3);
        cr_assert_str_eq(l[0], "/src");
        cr_assert_str_eq(l[1], "-/cache");
        cr_assert_str_eq(l[2], "/out");
        cr_assert_eq(launch_args_parse_property(&a, "ReadWritePaths="), 0);
        cr_assert(!launch_args_is_set(&a, LAUNCH_OPTION_READ_WRITE_PATHS));
        expect_usage_error(launch_args_parse_property(&a, "ProtectHome="), "ProtectHome= needs a value.");
}

Test(launch_args, tasks_max) {
        cr_assert_eq(launch_args_parse_property(&a, "TasksMax=64"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_TASKS_MAX), 64);
        cr_assert_eq(launch_args_parse_property(&a, "TasksMax=infinity"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_TASKS_MAX), UINT64_MAX);
        expect_usage_error(launch_args_parse_property(&a, "TasksMax=-1"),
                           "Invalid TasksMax '-1' (a number or 'infinity').");
}

Test(launch_args, cpu_quota) {
        cr_assert_eq(launch_args_parse_property(&a, "CPUQuotaPerSecUSec=50%"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC), 500000);
        cr_assert_eq(launch_args_parse_property(&a, "CPUQuotaPerSecUSec=250ms"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC), 250000);
        cr_assert_eq(launch_args_parse_property(&a, "CPUQuotaPerSecUSec=12.5%"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC), 125000);
        expect_usage_error(launch_args_parse_property(&a, "CPUQuotaPerSecUSec=half"),
                           "Invalid CPUQuotaPerSecUSec 'half' (e.g. 50% or 500ms).");
}

Test(launch_args, cpu_quota_bad_percent) {
        expect_usage_error(launch_args_parse_property(&a, "CPUQuotaPerSecUSec=5.5.5%"),
                           "Invalid CPUQuotaPerSecUSec '5.5.5%' (e.g. 50% or 500ms).");
}

Test(launch_args, max_runtime) {
        cr_assert_eq(launch_args_parse_property(&a, "MaxRuntimeUSec=1h30min"), 0);
        cr_assert_eq(number(LAUNCH_OPTION_MAX_RUNTIME_USEC), 90 * 60 * USEC_PER_SEC);
        expect_usage_error(launch_args_parse_property(&a, "MaxRuntimeUSec=forever"),
                           "Invalid duration 'forever' for MaxRuntimeUSec (try e.g. 90, 90s, 5min, 1h30min).");
}

Test(launch_args, max_runtime_out_of_range) {
        expect_usage_error(launch_args_parse_property(&a, "MaxRuntimeUSec=99999999999999999999w"),
                           "Duration '99999999999999999999w' for MaxRuntimeUSec is out of range.");
}

Test(launch_args, user) {
        const char *assignment = "User=nobody";

        cr_assert_eq(launch_args_parse_property(&a, assignment), 0);
        cr_assert(launch_args_is_set(&a, LAUNCH_OPTION_USER));
        cr_assert_str_eq(a.values[LAUNCH_OPTION_USER].signature, "s");
        /* Not copied: it lives as long as argv. */
        cr_assert_eq(a.values[LAUNCH_OPTION_USER].str, assignment + strlen("User="));
        expect_usage_error(launch_args_parse_property(&a, "User="), "User= needs a user name.");
}

/* A flag that names an option gives its value by the option's text: a
 * list's flag one word (spaces and all), a number's its number. */
Test(launch_args, a_flag_naming_an_option) {
        cr_assert_eq(launch_args_parse_value(&a, LAUNCH_OPTION_READ_WRITE_PATHS, "--writable", "/a dir"), 0);
        cr_assert_eq(launch_args_parse_value(&a, LAUNCH_OPTION_READ_WRITE_PATHS, "--writable", "/b"), 0);
        char *const *l = a.values[LAUNCH_OPTION_READ_WRITE_PATHS].strv;
        cr_assert_str_eq(l[0], "/a dir");
        cr_assert_str_eq(l[1], "/b");
        cr_assert_null(l[2]);
        cr_assert_eq(launch_args_parse_value(&a, LAUNCH_OPTION_MAX_PARALLEL, "--parallel", "4"), 0);
        cr_assert_eq(a.values[LAUNCH_OPTION_MAX_PARALLEL].u64, 4);
        cr_assert_str_eq(a.values[LAUNCH_OPTION_MAX_PARALLEL].signature, "u");
        expect_usage_error(launch_args_parse_value(&a, LAUNCH_OPTION_MAX_PARALLEL, "--parallel", "x"),
                           "Invalid --parallel 'x' (a number or 'infinity').");
}

Test(launch_args, a_flags_bad_value_names_the_flag) {
        expect_usage_error(launch_args_parse_value(&a, LAUNCH_OPTION_REQUEST_ID, "--request-id", "a b"),
                           "Invalid --request-id 'a b' (1 to 128 letters, digits and ._:@-).");
        cr_assert(!launch_args_is_set(&a, LAUNCH_OPTION_REQUEST_ID));
}

Test(launch_args, a_list_flag_needs_a_word) {
        expect_usage_error(launch_args_parse_value(&a, LAUNCH_OPTION_READ_WRITE_PATHS, "--writable", ""),
                           "--writable needs a value.");
}

Test(launch_args, environment) {
        char e1[] = "A=1", e2[] = "B=", bad[] = "=x";

        cr_assert_eq(launch_args_add_environment(&a, e1), 0);
        cr_assert_eq(launch_args_add_environment(&a, e2), 0);
        char **env = a.lists[LAUNCH_OPTION_ENVIRONMENT];
        cr_assert_eq(a.n_lists[LAUNCH_OPTION_ENVIRONMENT], 2);
        cr_assert(launch_args_is_set(&a, LAUNCH_OPTION_ENVIRONMENT));
        cr_assert_eq(a.values[LAUNCH_OPTION_ENVIRONMENT].strv, env);
        cr_assert_str_eq(env[0], e1);
        cr_assert_str_eq(env[1], e2);
        cr_assert_null(env[2]);
        expect_usage_error(launch_args_add_environment(&a, bad),
                           "Invalid environment assignment '=x', expected NAME=VALUE.");
        cr_assert_eq(a.n_lists[LAUNCH_OPTION_ENVIRONMENT], 2);
}

static sd_bus_message *new_message(void) {
        sd_bus_message *m = NULL;
        int s[2];

        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
        peer = s[1];
        cr_assert_geq(sd_bus_new(&bus), 0);
        cr_assert_geq(sd_bus_set_fd(bus, s[0], s[0]), 0);
        cr_assert_geq(sd_bus_start(bus), 0);
        cr_assert_geq(sd_bus_message_new_method_call(bus, &m, "org.example.Test", "/", "org.example.Test", "Launch"),
                      0);
        return m;
}

/* What launch_args_append() puts on the bus, as JSON. */
static void expect_bus(const char *want) {
        sd_bus_message *m = new_message();
        json_object *j = NULL;

        cr_assert_geq(launch_args_append(&a, m), 0);
        cr_assert_geq(sd_bus_message_seal(m, 1, 0), 0);
        cr_assert_geq(sd_bus_message_rewind(m, true), 0);
        cr_assert(sd_bus_message_has_signature(m, "a{sv}"));
        cr_assert_eq(bus_json_read(m, &j), 1);
        cr_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), want);
        json_object_put(j);
        sd_bus_message_unref(m);
}

Test(launch_args, nothing_set_is_an_empty_dictionary) {
        expect_bus("{}");
}

Test(launch_args, bus_order_is_numbers_first) {
        char e1[] = "A=1", e2[] = "B=2";

        /* Given in another order than they go: User, -E, numbers. */
        cr_assert_eq(launch_args_parse_property(&a, "User=nobody"), 0);
        cr_assert_eq(launch_args_add_environment(&a, e1), 0);
        cr_assert_eq(launch_args_parse_property(&a, "CPUQuotaPerSecUSec=50%"), 0);
        cr_assert_eq(launch_args_add_environment(&a, e2), 0);
        cr_assert_eq(launch_args_parse_property(&a, "TasksMax=64"), 0);
        cr_assert_eq(launch_args_parse_property(&a, "MemoryMax=1G"), 0);
        launch_args_set(&a, LAUNCH_OPTION_MAX_RUNTIME_USEC, (LaunchValue) { .u64 = 5 * USEC_PER_SEC });

        /* The order bgrun has always sent: of two bad values bgrund names the first. */
        expect_bus("{\"MaxRuntimeUSec\":5000000,\"MemoryMax\":1073741824,\"TasksMax\":64,"
                   "\"CPUQuotaPerSecUSec\":500000,\"Environment\":[\"A=1\",\"B=2\"],\"User\":\"nobody\"}");
}

Test(launch_args, only_what_was_given) {
        cr_assert_eq(launch_args_parse_property(&a, "TasksMax=infinity"), 0);
        expect_bus("{\"TasksMax\":18446744073709551615}");
}
