/* SPDX-License-Identifier: MIT */
/* The error table (core/errors.c) and its bus face (shared/bus-errors.c):
 * bgrun's codes are never errno values, each names its D-Bus error, sd-bus
 * learns the names keyed by the codes, and a client's line says what. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "bus-errors.h"
#include "errors.h"

Test(errors, a_code_is_no_errno_and_an_errno_is_no_code) {
        for (int e = 1; e < 4096; e++)
                cr_assert_eq(bgrun_error_code(-e), _BGRUN_E_NONE, "errno %d read as a code", e);
        cr_assert_eq(bgrun_error_code(0), _BGRUN_E_NONE);
        cr_assert_eq(bgrun_error_code(BGRUN_ERROR(KEEP_FREE)), BGRUN_E_KEEP_FREE);
        cr_assert_eq(bgrun_error_code(-(BGRUN_ERROR_BASE + _BGRUN_E_KINDS_END)), _BGRUN_E_NONE);
        cr_assert_eq(bgrun_error_code(-(BGRUN_ERROR_BASE + _BGRUN_E_MAX)), _BGRUN_E_NONE);
        cr_assert_null(bgrun_error_info(_BGRUN_E_NONE));
        cr_assert_null(bgrun_error_info(_BGRUN_E_KINDS_END));
        cr_assert_null(bgrun_error_info(_BGRUN_E_MAX));
}

Test(errors, a_condition_is_its_kinds_error) {
        cr_assert_eq(bgrun_error_info(BGRUN_E_KEEP_FREE)->kind, BGRUN_E_LIMIT_EXCEEDED);
        cr_assert_eq(bgrun_error_info(BGRUN_E_OVER_LIMIT)->kind, BGRUN_E_LIMIT_EXCEEDED);
        cr_assert_eq(bgrun_error_info(BGRUN_E_START_FAILED)->kind, BGRUN_E_CONTAINMENT_REFUSED);
        cr_assert_str_eq(bgrun_error_info(BGRUN_E_NO_CONTAINMENT)->word, "ContainmentRefused");
        cr_assert_eq(bgrun_error_info(BGRUN_E_QUEUE_FULL)->exit_status, BGRUN_EXIT_LIMIT);
        for (BgrunErrorCode c = _BGRUN_E_NONE + 1; c < _BGRUN_E_MAX; c++) {
                if (c == _BGRUN_E_KINDS_END)
                        continue;
                const BgrunErrorInfo *i = bgrun_error_info(c);
                cr_assert_not_null(i, "code %d has no row", c);
                cr_assert(i->kind > _BGRUN_E_NONE && i->kind < _BGRUN_E_KINDS_END, "code %d's kind", c);
                cr_assert(i->exit_status >= 240 && i->exit_status <= 247, "%s's exit status", i->word);
                cr_assert(i->word[0] && i->what[0], "code %d says nothing", c);
                cr_assert_eq(bgrun_error_by_word(i->word), bgrun_error_info(i->kind));
        }
        cr_assert_null(bgrun_error_by_word("Failed"));
        cr_assert_null(bgrun_error_by_word(NULL));
}

/* bus-api.h's constants, which clients in any language read, are the table's. */
Test(errors, the_public_names_are_the_tables) {
        static const struct {
                BgrunErrorCode code;
                const char *name;
        } names[] = {
                { BGRUN_E_ACCESS_DENIED, BGRUN_ERROR_ACCESS_DENIED },
                { BGRUN_E_NO_SUCH_JOB, BGRUN_ERROR_NO_SUCH_JOB },
                { BGRUN_E_CONTAINMENT_REFUSED, BGRUN_ERROR_CONTAINMENT_REFUSED },
                { BGRUN_E_JOB_NOT_FINISHED, BGRUN_ERROR_JOB_NOT_FINISHED },
                { BGRUN_E_LIMIT_EXCEEDED, BGRUN_ERROR_LIMIT_EXCEEDED },
                { BGRUN_E_NO_INPUT, BGRUN_ERROR_NO_INPUT },
                { BGRUN_E_INPUT_FULL, BGRUN_ERROR_INPUT_FULL },
                { BGRUN_E_LIMIT_NOT_ENFORCED, BGRUN_ERROR_LIMIT_NOT_ENFORCED },
                { BGRUN_E_DEADLINE_PASSED, BGRUN_ERROR_DEADLINE_PASSED },
                { BGRUN_E_SANDBOX_NOT_AVAILABLE, BGRUN_ERROR_SANDBOX_NOT_AVAILABLE },
                { BGRUN_E_INVALID_ARGS, BGRUN_ERROR_INVALID_ARGS },
        };
        cr_assert_eq(sizeof names / sizeof names[0], (size_t) _BGRUN_E_KINDS_END - 1, "a kind without its constant");
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                cr_assert_str_eq(bus_error_name(names[i].code), names[i].name);
        cr_assert_str_eq(bus_error_name(BGRUN_E_OVER_DISK_BUDGET), BGRUN_ERROR_LIMIT_EXCEEDED);
        cr_assert_null(bus_error_name(_BGRUN_E_NONE));
}

Test(errors, sd_bus_knows_the_names_by_code) {
        cr_assert_eq(bus_errors_register(), 0);
        cr_assert_eq(bus_errors_register(), 0, "registering twice is once");
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = bus_error_set(&e, BGRUN_ERROR(TOO_MANY_RUNNING), "MaxRunningJobs=%d reached", 4);
        cr_assert_lt(r, 0);
        cr_assert_str_eq(e.name, BGRUN_ERROR_LIMIT_EXCEEDED);
        cr_assert_str_eq(e.message, "MaxRunningJobs=4 reached");
        cr_assert_eq(sd_bus_error_get_errno(&e), BGRUN_ERROR_BASE + BGRUN_E_LIMIT_EXCEEDED);
        cr_assert_eq(bus_error_info(&e), bgrun_error_info(BGRUN_E_LIMIT_EXCEEDED));
        sd_bus_error_free(&e);
}

/* A real ENOSPC of the store is the system's error, not "KeepFree=". */
Test(errors, an_errno_stays_the_systems) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        (void) bus_error_set(&e, -ENOSPC, "Cannot create the job: %s", strerror(ENOSPC));
        cr_assert(sd_bus_error_is_set(&e));
        cr_assert_null(bus_error_info(&e), "ENOSPC read as %s", e.name);
        cr_assert_eq(sd_bus_error_get_errno(&e), ENOSPC);
        sd_bus_error_free(&e);

        (void) bus_error_set(&e, -EINVAL, "bad");
        cr_assert_str_eq(e.name, BGRUN_ERROR_INVALID_ARGS);
        cr_assert_eq(bus_error_info(&e)->exit_status, BGRUN_EXIT_INVALID_INPUT);
        sd_bus_error_free(&e);

        sd_bus_error denied = SD_BUS_ERROR_MAKE_CONST(SD_BUS_ERROR_ACCESS_DENIED, "no");
        cr_assert_eq(bus_error_info(&denied)->kind, BGRUN_E_ACCESS_DENIED);
        sd_bus_error other = SD_BUS_ERROR_MAKE_CONST("org.bgrun.Runtime1.Error.Unheard", "?");
        cr_assert_null(bus_error_info(&other));
}

static void assert_line(BgrunErrorCode code, const char *message, const char *advice, const char *expected) {
        char *line = bgrun_error_line(bgrun_error_info(code), message, advice);
        cr_assert_str_eq(line, expected);
        free(line);
}

Test(errors, a_line_says_what_once) {
        assert_line(BGRUN_E_ACCESS_DENIED, "Request authority denied: only root may", "",
                    "Access denied: only root may");
        assert_line(BGRUN_E_NO_SUCH_JOB, "No such job: abc", "See the list.", "No such job: abc. See the list.");
        assert_line(BGRUN_E_NO_SUCH_JOB, "no such job: abc.", "See the list.", "No such job: abc. See the list.");
        assert_line(BGRUN_E_LIMIT_EXCEEDED, "MaxQueuedJobs=1 reached; nothing was queued", NULL,
                    "Limit exceeded: MaxQueuedJobs=1 reached; nothing was queued");
        assert_line(BGRUN_E_INPUT_FULL, "", "Wait.", "Input full. Wait.");
        assert_line(BGRUN_E_INPUT_FULL, NULL, "", "Input full");
}
