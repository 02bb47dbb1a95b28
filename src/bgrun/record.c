/* SPDX-License-Identifier: MIT */
/* The tables through which bgrun reads bgrund's records and results, and what
 * a record says: running or not, how it ended, bgrun's exit status for it. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "record.h"

#define EXIT_TIMEOUT 124 /* as timeout(1) */

static const FieldMap containment_map[] = {
        FIELD(Containment, "mechanism", mechanism, FIELD_STRING),
        FIELD(Containment, "contained", contained, FIELD_BOOL),
        FIELD(Containment, "executed", executed, FIELD_BOOL),
        FIELD(Containment, "unit", unit, FIELD_STRING),
        FIELD(Containment, "cgroup", cgroup, FIELD_STRING),
        {},
};

static const FieldMap teardown_map[] = {
        FIELD(Teardown, "dead", dead, FIELD_BOOL),
        FIELD(Teardown, "method", method, FIELD_STRING),
        FIELD(Teardown, "confirmed_at", confirmed_at, FIELD_UINT64),
        {},
};

const FieldMap record_map[] = {
        [RECORD_ID] = FIELD(JobRecord, "id", id, FIELD_STRING),
        [RECORD_SESSION_ID] = FIELD(JobRecord, "session_id", session_id, FIELD_STRING),
        [RECORD_COMMAND] = FIELD(JobRecord, "command", command, FIELD_STRING),
        [RECORD_CWD] = FIELD(JobRecord, "cwd", cwd, FIELD_STRING),
        [RECORD_OWNER] = FIELD(JobRecord, "owner", owner, FIELD_UINT32),
        [RECORD_STATUS] = FIELD(JobRecord, "status", status, FIELD_STRING),
        [RECORD_EXIT_CODE] = FIELD(JobRecord, "exit_code", exit_code, FIELD_INT32),
        [RECORD_SIGNAL] = FIELD(JobRecord, "signal", signal, FIELD_INT32),
        [RECORD_TIMED_OUT] = FIELD(JobRecord, "timed_out", timed_out, FIELD_BOOL),
        [RECORD_PID] = FIELD(JobRecord, "pid", pid, FIELD_UINT32),
        [RECORD_START_TOKEN] = FIELD(JobRecord, "start_token", start_token, FIELD_STRING),
        [RECORD_STARTED_AT] = FIELD(JobRecord, "started_at", started_at, FIELD_UINT64),
        [RECORD_FINISHED_AT] = FIELD(JobRecord, "finished_at", finished_at, FIELD_UINT64),
        [RECORD_OUTPUT_BYTES] = FIELD(JobRecord, "output_bytes", output_bytes, FIELD_UINT64),
        [RECORD_CONTAINMENT] = FIELD_NESTED(JobRecord, "containment", containment, containment_map),
        [RECORD_TEARDOWN] = FIELD_NESTED(JobRecord, "teardown", teardown, teardown_map),
        {},
};

const FieldMap kill_map[] = {
        FIELD(KillResult, "killed", killed, FIELD_BOOL),
        FIELD_NESTED(KillResult, "teardown", teardown, teardown_map),
        {},
};

const FieldMap reap_map[] = {
        FIELD(ReapResult, "background_kept", background_kept, FIELD_UINT32),
        FIELD(ReapResult, "released", released, FIELD_UINT32),
        FIELD(ReapResult, "orphans_killed", orphans_killed, FIELD_UINT32),
        {},
};

void job_record_done(JobRecord *rec) {
        dict_done(record_map, rec);
}

void kill_result_done(KillResult *k) {
        dict_done(kill_map, k);
}

bool record_is_running(const JobRecord *rec) {
        if (RECORD_HAS(rec, RECORD_STATUS))
                return streq(rec->status, "running");
        if (RECORD_HAS(rec, RECORD_FINISHED_AT))
                return rec->finished_at == 0;
        return false; /* know nothing: do not wait forever */
}

bool record_timed_out(const JobRecord *rec) {
        return (RECORD_HAS(rec, RECORD_TIMED_OUT) && rec->timed_out) ||
                (RECORD_HAS(rec, RECORD_STATUS) && streq(rec->status, "timed_out"));
}

int record_signal(const JobRecord *rec) {
        return RECORD_HAS(rec, RECORD_SIGNAL) && rec->signal > 0 ? rec->signal : 0;
}

int record_exit_status(const JobRecord *rec) {
        if (record_timed_out(rec))
                return EXIT_TIMEOUT;
        if (record_signal(rec) > 0)
                return 128 + (record_signal(rec) & 0x7f);
        if (RECORD_HAS(rec, RECORD_EXIT_CODE) && rec->exit_code >= 0 && rec->exit_code <= 255)
                return rec->exit_code;
        return EXIT_FAILURE;
}

const char *record_id(const JobRecord *rec, const char *fallback) {
        return RECORD_HAS(rec, RECORD_ID) ? rec->id : fallback;
}

void format_outcome(const JobRecord *rec, char *buf, size_t len) {
        int sig = record_signal(rec);

        if (record_is_running(rec))
                snprintf(buf, len, "is still running");
        else if (record_timed_out(rec))
                snprintf(buf, len, "timed out%s", sig > 0 ? " and was killed" : "");
        else if (sig > 0)
                snprintf(buf, len, "was killed by signal %d (%s)", sig, strsignal(sig));
        else if (RECORD_HAS(rec, RECORD_EXIT_CODE) && rec->exit_code >= 0)
                snprintf(buf, len, "%s with status %" PRIi32,
                         RECORD_HAS(rec, RECORD_STATUS) && streq(rec->status, "failed") ? "failed" : "exited",
                         rec->exit_code);
        else
                snprintf(buf, len, "%s", RECORD_HAS(rec, RECORD_STATUS) ? rec->status : "ended");
}
