/* SPDX-License-Identifier: MIT */
#pragma once

/* The reaper's decisions, kept apart from the doing so they can be tested
 * alone: what becomes of a job found in the store when bgrund starts, or in
 * a Reap pass. */

#include <stdbool.h>

typedef enum ReapDecision {
        REAP_ENDED,   /* a final result exists: nothing runs, nothing to do */
        REAP_KEEP,    /* the supervisor verifies: keep watching it */
        REAP_RELEASE, /* unverifiable: kill its containment, confirm, record */
} ReapDecision;

/* have_result: result.json exists and parses. have_run: run.json does.
 * supervisor: the PidRefState of the recorded supervisor pid checked against
 * its start token, or -errno when it could not be checked. */
ReapDecision reap_decide(bool have_result, bool have_run, int supervisor);

/* Whether an ended job's grant may be released now: only a confirmed
 * teardown releases it. */
bool reap_release_grant(bool grant_open, bool result_dead);

const char *reap_decision_to_string(ReapDecision d);
