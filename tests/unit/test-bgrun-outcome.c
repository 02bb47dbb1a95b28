/* SPDX-License-Identifier: MIT */
/* What bgrun tells a program (issue #25): each error its own exit status,
 * and output as valid UTF-8 for logs --json. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bgrun/bus-api.h"
#include "call-error.h"
#include "errors.h"
#include "utf8.h"

static int code_of(const char *name, int r) {
        sd_bus_error e = SD_BUS_ERROR_MAKE_CONST(name, "m");
        return exit_code_for_error(name ? &e : NULL, r);
}

Test(outcome, each_error_its_code) {
        cr_assert_eq(code_of(BGRUN_ERROR_NO_SUCH_JOB, -ENOENT), BGRUN_EXIT_NO_SUCH_JOB);
        cr_assert_eq(code_of(BGRUN_ERROR_INVALID_ARGS, -EINVAL), BGRUN_EXIT_INVALID_INPUT);
        cr_assert_eq(code_of(BGRUN_ERROR_ACCESS_DENIED, -EACCES), BGRUN_EXIT_ACCESS_DENIED);
        cr_assert_eq(code_of(SD_BUS_ERROR_ACCESS_DENIED, -EACCES), BGRUN_EXIT_ACCESS_DENIED);
        cr_assert_eq(code_of(BGRUN_ERROR_LIMIT_EXCEEDED, -EUSERS), BGRUN_EXIT_LIMIT);
        cr_assert_eq(code_of(BGRUN_ERROR_INPUT_FULL, -EAGAIN), BGRUN_EXIT_LIMIT);
        cr_assert_eq(code_of(BGRUN_ERROR_CONTAINMENT_REFUSED, -EPERM), BGRUN_EXIT_CONTAINMENT_REFUSED);
        cr_assert_eq(code_of(SD_BUS_ERROR_NO_REPLY, -ETIMEDOUT), BGRUN_EXIT_UNREACHABLE);
        cr_assert_eq(code_of(SD_BUS_ERROR_SERVICE_UNKNOWN, -EHOSTDOWN), BGRUN_EXIT_UNREACHABLE);
        cr_assert_eq(code_of(NULL, -ECONNREFUSED), BGRUN_EXIT_UNREACHABLE);
        cr_assert_eq(code_of(NULL, -ETIMEDOUT), BGRUN_EXIT_UNREACHABLE);
        cr_assert_eq(code_of(BGRUN_ERROR_JOB_NOT_FINISHED, -EBUSY), BGRUN_EXIT_FAILURE);
        cr_assert_eq(code_of(NULL, -EIO), BGRUN_EXIT_FAILURE);
}

Test(outcome, error_names_for_json) {
        sd_bus_error e = SD_BUS_ERROR_MAKE_CONST(BGRUN_ERROR_NO_SUCH_JOB, "m");

        cr_assert_str_eq(bus_error_last_name(&e, -ENOENT), "NoSuchJob");
        cr_assert_str_eq(bus_error_last_name(NULL, -ETIMEDOUT), "NoReply");
        cr_assert_str_eq(bus_error_last_name(NULL, -ECONNREFUSED), "Disconnected");
        cr_assert_str_eq(bus_error_last_name(NULL, -EIO), "Failed");
}

static void expect_valid(const char *in, size_t n, const char *want) {
        size_t len;
        char *out = utf8_make_valid(in, n, &len);

        cr_assert_not_null(out);
        cr_assert_eq(len, strlen(want), "length %zu for %s", len, want);
        cr_assert_str_eq(out, want);
        free(out);
}

Test(outcome, utf8_made_valid) {
        expect_valid("plain", 5, "plain");
        expect_valid("\xC3\xA9t\xC3\xA9", 5, "\xC3\xA9t\xC3\xA9");                /* été */
        expect_valid("a\xFF" "b", 3, "a\xEF\xBF\xBD" "b");                          /* a stray byte */
        expect_valid("\xC0\xAF", 2, "\xEF\xBF\xBD\xEF\xBF\xBD");                    /* overlong / */
        expect_valid("\xED\xA0\x80", 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  /* a surrogate */
        expect_valid("\xF4\x90\x80\x80", 4,
                     "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");        /* past U+10FFFF */
        expect_valid("\xF0\x9F\x98\x80", 4, "\xF0\x9F\x98\x80");                    /* an emoji */
        expect_valid("\xE2\x82", 2, "\xEF\xBF\xBD\xEF\xBF\xBD");                    /* cut short */
}
