/* SPDX-License-Identifier: MIT */
#pragma once

/* What bgrund answers, as bgrun reads it: a job's record (Get, Wait), the
 * result of Kill and of Reap; and what a record says about its job. Each
 * struct is read and printed through its FieldMap (see dict.h). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dict.h"

typedef struct Containment {
        uint32_t present;
        char *mechanism;
        int contained;
        int executed;
        char *unit;
        char *cgroup;
} Containment;

typedef struct Teardown {
        uint32_t present;
        int dead;
        char *method;
        uint64_t confirmed_at;
} Teardown;

typedef struct JobRecord {
        uint32_t present;
        char *id;
        char *session_id;
        char *command;
        char *cwd;
        uint32_t owner;
        char *status;
        int32_t exit_code;
        int32_t signal;
        int timed_out;
        uint32_t pid;
        char *start_token;
        uint64_t started_at;
        uint64_t finished_at;
        uint64_t output_bytes;
        Containment containment;
        Teardown teardown;
} JobRecord;

typedef struct KillResult {
        uint32_t present;
        int killed;
        Teardown teardown;
} KillResult;

typedef struct ReapResult {
        uint32_t present;
        uint32_t background_kept;
        uint32_t released;
        uint32_t orphans_killed;
} ReapResult;

/* Keep in sync with the record table of the contract; the index of each
 * entry is its bit in JobRecord.present (see RECORD_HAS()). */
enum {
        RECORD_ID,
        RECORD_SESSION_ID,
        RECORD_COMMAND,
        RECORD_CWD,
        RECORD_OWNER,
        RECORD_STATUS,
        RECORD_EXIT_CODE,
        RECORD_SIGNAL,
        RECORD_TIMED_OUT,
        RECORD_PID,
        RECORD_START_TOKEN,
        RECORD_STARTED_AT,
        RECORD_FINISHED_AT,
        RECORD_OUTPUT_BYTES,
        RECORD_CONTAINMENT,
        RECORD_TEARDOWN,
};

#define RECORD_HAS(rec, field) (((rec)->present & (UINT32_C(1) << (field))) != 0)
#define SUB_HAS(sub, index) (((sub)->present & (UINT32_C(1) << (index))) != 0)
/* Indices into containment_map / teardown_map / kill_map / reap_map. */
enum { CONTAINMENT_MECHANISM, CONTAINMENT_CONTAINED, CONTAINMENT_EXECUTED, CONTAINMENT_UNIT, CONTAINMENT_CGROUP };
enum { TEARDOWN_DEAD, TEARDOWN_METHOD, TEARDOWN_CONFIRMED_AT };
enum { KILL_KILLED, KILL_TEARDOWN };
enum { REAP_BACKGROUND_KEPT, REAP_RELEASED, REAP_ORPHANS_KILLED };

extern const FieldMap record_map[];
extern const FieldMap kill_map[];
extern const FieldMap reap_map[];

void job_record_done(JobRecord *rec);
void kill_result_done(KillResult *k);

bool record_is_running(const JobRecord *rec);
bool record_timed_out(const JobRecord *rec);
/* The signal that ended the job, or 0. */
int record_signal(const JobRecord *rec);
/* The exit status of bgrun for an ended job, as timeout(1) and shells do it. */
int record_exit_status(const JobRecord *rec);
/* The record's job id, or fallback if it has none. */
const char *record_id(const JobRecord *rec, const char *fallback);
/* One line: how the job ended (or that it has not). */
void format_outcome(const JobRecord *rec, char *buf, size_t len);
