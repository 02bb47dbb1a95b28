/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>

#include "pidref.h"
#include "reaper.h"

Test(reaper, ended_jobs_are_left_alone) {
        cr_assert_eq(reap_decide(true, true, PIDREF_OWNED), REAP_ENDED);
        cr_assert_eq(reap_decide(true, true, PIDREF_FOREIGN), REAP_ENDED);
        cr_assert_eq(reap_decide(true, false, -ENOENT), REAP_ENDED);
}

Test(reaper, only_a_verified_supervisor_is_kept) {
        cr_assert_eq(reap_decide(false, true, PIDREF_OWNED), REAP_KEEP);
        cr_assert_eq(reap_decide(false, true, PIDREF_FOREIGN), REAP_RELEASE);
        cr_assert_eq(reap_decide(false, true, PIDREF_GONE), REAP_RELEASE);
        cr_assert_eq(reap_decide(false, true, -EPERM), REAP_RELEASE);
        cr_assert_eq(reap_decide(false, true, -EOPNOTSUPP), REAP_RELEASE);
}

Test(reaper, an_unfinished_launch_is_released) {
        /* Even an "owned" answer cannot count without run.json. */
        cr_assert_eq(reap_decide(false, false, PIDREF_OWNED), REAP_RELEASE);
        cr_assert_eq(reap_decide(false, false, -ENOENT), REAP_RELEASE);
}

Test(reaper, grants_release_only_on_confirmed_teardown) {
        cr_assert(reap_release_grant(true, true));
        cr_assert_not(reap_release_grant(true, false));
        cr_assert_not(reap_release_grant(false, true));
        cr_assert_not(reap_release_grant(false, false));
}

Test(reaper, names) {
        cr_assert_str_eq(reap_decision_to_string(REAP_KEEP), "keep");
        cr_assert_str_eq(reap_decision_to_string(REAP_RELEASE), "release");
        cr_assert_str_eq(reap_decision_to_string(REAP_ENDED), "ended");
}
