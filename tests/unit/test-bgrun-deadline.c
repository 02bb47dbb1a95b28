/* SPDX-License-Identifier: MIT */
/* The pings of a waiting call (src/bgrun/deadline.c): a stopped bgrund is
 * given up on no sooner than the deadline the message names after it
 * stopped, and soon after that (issue #36, row 8: a 3 s deadline once gave
 * up 2.26 s after the stop). */
#include <criterion/criterion.h>
#include <inttypes.h>

#include "deadline.h"

Test(deadline, a_stopped_bgrund_is_given_up_on_between_the_deadline_and_a_tenth_more) {
        static const uint64_t deadlines[] = { 10, 1000, 2 * USEC_PER_SEC, 3 * USEC_PER_SEC, 30 * USEC_PER_SEC,
                                              7 * USEC_PER_SEC + 3 };

        for (size_t i = 0; i < ELEMENTSOF(deadlines); i++) {
                uint64_t d = deadlines[i];

                call_deadline_set(d);
                /* Stopped while a ping is out: its whole timeout is still
                 * to come. Stopped just after an answer: the next ping goes
                 * out an interval later, and its timeout runs from there. */
                cr_assert_eq(call_ping_timeout_usec(), d, "deadline %" PRIu64 ": a ping waits %" PRIu64, d,
                             call_ping_timeout_usec());
                cr_assert_gt(call_ping_interval_usec(), 0);
                cr_assert_leq(call_ping_interval_usec(), d / 10, "deadline %" PRIu64 ": pings %" PRIu64 " apart", d,
                              call_ping_interval_usec());
        }
}

Test(deadline, zero_is_the_default) {
        call_deadline_set(0);
        cr_assert_eq(call_deadline_usec(), CALL_DEADLINE_DEFAULT_USEC);
}
