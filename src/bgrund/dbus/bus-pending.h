/* SPDX-License-Identifier: MIT */
#pragma once

/* Method calls that wait on a job: Launch until it runs (or never will),
 * Wait until it ends or its timeout passes, Kill until its teardown is
 * confirmed, Forget of a killed job until its record is final, WriteInput and ResizeTty until the supervisor answers (or, at
 * most, BUS_INPUT_WAIT_USEC). The face keeps them by job in its own map
 * (BusService.pending_jobs), which the lifecycle never sees, and answers
 * them on the runtime's notifications (bus-service.c): O(1) per job. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "job.h"

typedef enum PendingKind {
        PENDING_LAUNCH,
        PENDING_LAUNCH_SAME,  /* a Launch of the RequestId a starting job was launched with: answered
                               * as its Launch is, or, if it never started, launched anew */
        PENDING_WAIT,
        PENDING_KILL,
        PENDING_KILL_SESSION, /* one of the jobs a KillSession call waits on */
        PENDING_INPUT,        /* WriteInput, ResizeTty: until the job's supervisor answers */
        PENDING_FORGET,       /* Forget of a job killed but not final yet: until it is */
        PENDING_OUTPUT,       /* WaitOutput: until output past its offset, the job's end, or its timeout;
                               * each holds one waiter of the job's output watch (output-watch.h) */
} PendingKind;

typedef struct BusService BusService;

typedef struct BusClient BusClient;
typedef struct PendingCall PendingCall;
typedef struct PendingJob PendingJob;

/* Hold call until j's next answer; for PENDING_WAIT and PENDING_INPUT, at
 * most timeout_usec (past a century is forever), then answered by
 * timeout(), for PENDING_WAIT the record as it is. Counted against the caller's connection and
 * uid: LimitExceeded in error past their share. */
typedef void (*PendingAnswer)(Job *j, sd_bus_message *call, void *userdata);
int pending_call_add(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec,
                     sd_bus_error *error);
int pending_call_add_full(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec,
                          PendingAnswer timeout, sd_bus_error *error);

/* Whether j holds a call of kind. */
bool pending_calls_any(BusService *s, const Job *j, PendingKind kind);

/* Hold a KillSession call until every job of jobs[0..n) ended; answered
 * with how many ended killed and whether every one is confirmed dead. It
 * counts as one waiting call of the caller's. */
int pending_kill_session_add(BusService *s, Job *const *jobs, size_t n, sd_bus_message *call, sd_bus_error *error);

/* j ended (or was discarded before it started): count it for the
 * KillSession calls waiting on it, answering any that waited on nothing
 * else. */
void pending_kill_session_job_ended(BusService *s, Job *j);

/* Answer each call of one kind held on j, oldest first, taking it off first. */
void pending_calls_answer(BusService *s, Job *j, PendingKind kind, PendingAnswer answer, void *userdata);
/* The same for those calls of kind that ready() says may answer now. */
void pending_calls_answer_ready(BusService *s, Job *j, PendingKind kind, bool (*ready)(Job *j, sd_bus_message *call),
                                PendingAnswer answer, void *userdata);

/* Drop every pending call of j unanswered (j is going). */
void pending_calls_drop(BusService *s, Job *j);
/* Drop every pending call unanswered (shutdown). */
void pending_calls_drop_all(BusService *s);

/* Drop the calls of a connection that is gone: nobody can be answered. */
void pending_calls_drop_client(BusClient *c);
