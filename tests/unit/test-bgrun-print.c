/* SPDX-License-Identifier: MIT */
/* Printing for people: a cell cut to its columns, a record as labelled
 * lines, and JSON as it came. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "print.h"

static void setup(void) {
        cr_redirect_stdout();
        /* Timestamps print in local time. */
        setenv("TZ", "UTC", 1);
        tzset();
}

TestSuite(print, .init = setup);

static void expect_stdout(const char *want) {
        fflush(stdout);
        cr_assert_stdout_eq_str(want);
}

Test(print, cell_cut_to_columns) {
        print_cell("abcdef", 5);
        putchar('|');
        print_cell("abcde", 5);
        putchar('|');
        print_cell("abc", 2);
        putchar('|');
        /* Columns are characters, not bytes. */
        print_cell("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4);
        putchar('|');
        /* Control characters cannot start a line of their own. */
        print_cell("a\nb\tc\x7f", SIZE_MAX);
        expect_stdout("ab...|abcde|..|\xc3\xa9...|a b c ");
}

Test(print, record) {
        json_object *rec = json_tokener_parse(
                "{\"id\":\"abcdefgh12\",\"session_id\":\"\",\"command\":\"echo hi\\tthere\",\"cwd\":\"/srv\","
                "\"owner\":0,\"status\":\"exited\",\"exit_code\":3,\"signal\":0,\"timed_out\":false,\"pid\":72,"
                "\"start_token\":\"t\",\"started_at\":1796026197572537,\"finished_at\":1796026197581385,"
                "\"output_bytes\":10,"
                "\"containment\":{\"mechanism\":\"systemd\",\"contained\":true,\"executed\":true,"
                "\"unit\":\"bgrun-job-abcdefgh12.scope\",\"cgroup\":\"\"},"
                "\"teardown\":{\"dead\":true,\"method\":\"cgroup.kill\",\"confirmed_at\":1796026197581385}}");

        cr_assert_not_null(rec);
        print_record(rec, "fallback");
        json_object_put(rec);
        expect_stdout("         Job: abcdefgh12\n"
                      "      Status: exited\n"
                      "     Command: echo hi there\n"
                      "   Directory: /srv\n"
                      "     Session: (none)\n"
                      "       Owner: 0 (root)\n"
                      "         PID: 72\n"
                      "   Exit code: 3\n"
                      "     Started: Mon 2026-11-30 08:09:57 UTC\n"
                      "    Finished: Mon 2026-11-30 08:09:57 UTC\n"
                      "     Runtime: 8.848ms\n"
                      "      Output: 10 bytes\n"
                      " Containment: systemd, contained: yes, executed: yes\n"
                      "        Unit: bgrun-job-abcdefgh12.scope\n"
                      "    Teardown: dead: yes, method: cgroup.kill, confirmed Mon 2026-11-30 08:09:57 UTC\n");
}

Test(print, record_with_little_in_it) {
        /* A killed job's signal, a teardown not confirmed, keys of a wrong type left out. */
        json_object *rec = json_tokener_parse(
                "{\"status\":\"killed\",\"exit_code\":-1,\"signal\":9,\"pid\":0,\"owner\":\"root\","
                "\"containment\":{},\"teardown\":{\"method\":\"\"}}");

        cr_assert_not_null(rec);
        print_record(rec, "fallback");
        json_object_put(rec);
        expect_stdout("         Job: fallback\n"
                      "      Status: killed\n"
                      "      Signal: 9 (Killed)\n"
                      " Containment: unknown\n"
                      "    Teardown: dead: unknown\n");
}

Test(print, json_on_a_pipe_is_one_line_as_it_came) {
        json_object *o = json_tokener_parse("{\"z\":1,\"a\":\"/x/y\",\"m\":{\"b\":true,\"a\":18446744073709551615}}");

        cr_assert_not_null(o);
        cr_assert_eq(print_json(o), 0);
        json_object_put(o);
        expect_stdout("{\"z\":1,\"a\":\"/x/y\",\"m\":{\"b\":true,\"a\":18446744073709551615}}\n");
}
