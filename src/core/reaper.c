/* SPDX-License-Identifier: MIT */
#include "pidref.h"
#include "reaper.h"

ReapDecision reap_decide(bool have_result, bool have_run, int supervisor) {
        if (have_result)
                return REAP_ENDED;
        /* Without run.json the launch never finished: whatever of it may be
         * running was never handed to anyone, and nothing can verify it. */
        if (!have_run)
                return REAP_RELEASE;
        /* Only a supervisor that is provably the one recorded is kept; a pid
         * now used by another process, a dead one, or one that cannot be
         * checked gets its containment released, never signalled. */
        return supervisor == PIDREF_OWNED ? REAP_KEEP : REAP_RELEASE;
}

bool reap_release_grant(bool grant_open, bool result_dead) {
        return grant_open && result_dead;
}

const char *reap_decision_to_string(ReapDecision d) {
        switch (d) {
        case REAP_ENDED: return "ended";
        case REAP_KEEP: return "keep";
        case REAP_RELEASE: return "release";
        }
        return "?";
}
