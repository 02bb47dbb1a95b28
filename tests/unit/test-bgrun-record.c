/* SPDX-License-Identifier: MIT */
/* What bgrun makes of a record: running or not, its exit status, the line
 * that says how the job ended, and values read by the key tables with the
 * types those give. Records are written as JSON here, as bus_json_read()
 * would have made them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

static json_object *rec;

static void teardown(void) {
        json_object_put(rec);
        rec = NULL;
}

TestSuite(record, .fini = teardown);

static json_object *parse(const char *json) {
        json_object_put(rec);
        rec = json_tokener_parse(json);
        cr_assert_not_null(rec, "bad test JSON: %s", json);
        return rec;
}

static const struct {
        const char *json;
        int exit_status;
        const char *outcome;
} cases[] = {
        /* Exited N: N. */
        { "{\"status\":\"exited\",\"exit_code\":0,\"signal\":0,\"timed_out\":false}", 0, "exited with status 0" },
        { "{\"status\":\"exited\",\"exit_code\":3,\"signal\":0,\"timed_out\":false}", 3, "exited with status 3" },
        { "{\"status\":\"exited\",\"exit_code\":255,\"signal\":0}", 255, "exited with status 255" },
        /* Killed by signal N: 128+N, as shells say it. */
        { "{\"status\":\"exited\",\"exit_code\":-1,\"signal\":15,\"timed_out\":false}", 143,
          "was killed by signal 15 (Terminated)" },
        { "{\"status\":\"killed\",\"exit_code\":-1,\"signal\":9,\"timed_out\":false}", 137,
          "was killed by signal 9 (Killed)" },
        /* Timed out: 124, as timeout(1), whatever the signal. */
        { "{\"status\":\"timed_out\",\"exit_code\":-1,\"signal\":9,\"timed_out\":true}", 124,
          "timed out and was killed" },
        { "{\"status\":\"timed_out\",\"exit_code\":-1,\"signal\":0}", 124, "timed out" },
        { "{\"timed_out\":true,\"exit_code\":0}", 124, "timed out" },
        /* Failed: 1, and the word says so. */
        { "{\"status\":\"failed\",\"exit_code\":-1,\"signal\":0,\"timed_out\":false}", 1, "failed" },
        { "{\"status\":\"failed\",\"exit_code\":127,\"signal\":0}", 127, "failed with status 127" },
        /* Killed by bgrun before it ran: no code, no signal. */
        { "{\"status\":\"killed\",\"exit_code\":-1,\"signal\":0}", 1, "killed" },
        /* Running. */
        { "{\"status\":\"running\",\"exit_code\":-1,\"signal\":0,\"finished_at\":0}", 1, "is still running" },
        /* A code outside 0..255 is no exit status. */
        { "{\"status\":\"exited\",\"exit_code\":256,\"signal\":0}", 1, "exited with status 256" },
        /* Knowing nothing. */
        { "{}", 1, "ended" },
        /* Values of another type than the table's count as absent. */
        { "{\"status\":\"exited\",\"exit_code\":\"3\",\"signal\":\"9\"}", 1, "exited" },
        { "{\"status\":\"exited\",\"exit_code\":3,\"signal\":4294967296}", 3, "exited with status 3" },
        { "{\"status\":7,\"exit_code\":3,\"timed_out\":1}", 3, "exited with status 3" },
};

Test(record, exit_status_and_outcome) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                char buf[128];

                parse(cases[i].json);
                cr_assert_eq(record_exit_status(rec), cases[i].exit_status, "%s: exit status %d, want %d",
                             cases[i].json, record_exit_status(rec), cases[i].exit_status);
                format_outcome(rec, buf, sizeof buf);
                cr_assert_str_eq(buf, cases[i].outcome, "%s", cases[i].json);
        }
}

Test(record, signal_numbers_beyond_127_stay_in_a_byte) {
        parse("{\"status\":\"exited\",\"signal\":200}");
        cr_assert_eq(record_signal(rec), 200);
        cr_assert_eq(record_exit_status(rec), 128 + (200 & 0x7f));
}

Test(record, running) {
        cr_assert(record_is_running(parse("{\"status\":\"running\"}")));
        cr_assert_not(record_is_running(parse("{\"status\":\"exited\",\"finished_at\":0}")));
        /* Without a status, finished_at decides. */
        cr_assert(record_is_running(parse("{\"finished_at\":0}")));
        cr_assert_not(record_is_running(parse("{\"finished_at\":1796026197581385}")));
        /* An unknown status is not running, and neither is nothing: never wait forever. */
        cr_assert_not(record_is_running(parse("{\"status\":\"paused\"}")));
        cr_assert_not(record_is_running(parse("{}")));
        /* A Kill answered at its confirmation: killed, its end's own fields
         * still to come with finished_at; a wait goes on until then. */
        cr_assert(record_is_running(parse("{\"status\":\"killed\",\"finished_at\":0}")));
        cr_assert(record_is_running(parse("{\"status\":\"timed_out\",\"finished_at\":0}")));
        cr_assert_not(record_is_running(parse("{\"status\":\"killed\",\"finished_at\":1796026197581385}")));
        cr_assert_not(record_is_running(parse("{\"status\":\"failed\",\"finished_at\":0}")));
        cr_assert_not(record_is_running(NULL));
}

Test(record, id) {
        cr_assert_str_eq(record_id(parse("{\"id\":\"abc123defg\"}"), "x"), "abc123defg");
        cr_assert_str_eq(record_id(parse("{}"), "fallback"), "fallback");
        cr_assert_str_eq(record_id(parse("{\"id\":12}"), "fallback"), "fallback");
}

Test(record, nested_dictionaries_by_their_tables) {
        json_object *t, *c;
        const char *s;
        uint64_t u;
        bool b;

        parse("{\"containment\":{\"mechanism\":\"systemd\",\"contained\":true},"
              "\"teardown\":{\"dead\":false,\"method\":\"cgroup.kill\",\"confirmed_at\":5}}");

        c = dict_get(rec, &record_keys[RECORD_KEY_CONTAINMENT]);
        cr_assert_not_null(c);
        cr_assert_str_eq(dict_get_string(c, &containment_keys[CONTAINMENT_KEY_MECHANISM]), "systemd");
        cr_assert(dict_get_bool(c, &containment_keys[CONTAINMENT_KEY_CONTAINED], &b) && b);
        cr_assert_not(dict_get_bool(c, &containment_keys[CONTAINMENT_KEY_EXECUTED], &b));

        t = dict_get(rec, &record_keys[RECORD_KEY_TEARDOWN]);
        cr_assert(dict_get_bool(t, &teardown_keys[TEARDOWN_KEY_DEAD], &b) && !b);
        cr_assert(dict_get_uint(t, &teardown_keys[TEARDOWN_KEY_CONFIRMED_AT], &u) && u == 5);
        s = dict_get_string(t, &teardown_keys[TEARDOWN_KEY_METHOD]);
        cr_assert_str_eq(s, "cgroup.kill");

        /* A dictionary that is not there reads as empty. */
        cr_assert_null(dict_get(rec, &record_keys[RECORD_KEY_ID]));
        cr_assert_not(dict_get_bool(NULL, &teardown_keys[TEARDOWN_KEY_DEAD], &b));
        cr_assert_null(dict_get_string(NULL, &teardown_keys[TEARDOWN_KEY_METHOD]));
}

Test(record, values_are_read_by_the_type_of_their_key) {
        int64_t i;
        uint64_t u;

        parse("{\"owner\":4294967295,\"pid\":4294967296,\"exit_code\":-5,\"started_at\":18446744073709551615,"
              "\"status\":\"exited\",\"output_bytes\":-1}");

        cr_assert(dict_get_uint(rec, &record_keys[RECORD_KEY_OWNER], &u) && u == UINT32_MAX);
        /* "u": beyond 32 bits is not a value bgrund could have sent. */
        cr_assert_not(dict_get_uint(rec, &record_keys[RECORD_KEY_PID], &u));
        cr_assert(dict_get_int(rec, &record_keys[RECORD_KEY_EXIT_CODE], &i) && i == -5);
        cr_assert(dict_get_uint(rec, &record_keys[RECORD_KEY_STARTED_AT], &u) && u == UINT64_MAX);
        cr_assert_not(dict_get_uint(rec, &record_keys[RECORD_KEY_OUTPUT_BYTES], &u));

        /* Asking by the wrong C type is refused, not converted. */
        cr_assert_not(dict_get_uint(rec, &record_keys[RECORD_KEY_EXIT_CODE], &u));
        cr_assert_not(dict_get_int(rec, &record_keys[RECORD_KEY_OWNER], &i));
        cr_assert_null(dict_get_string(rec, &record_keys[RECORD_KEY_OWNER]));
}
