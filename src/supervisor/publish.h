/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "input-control.h"
#include "job-record.h"
#include "job-teardown.h"
#include "job-usage.h"

/* What happened to a job, as the supervisor saw it. */
typedef struct JobOutcome {
        JobStatus status;
        int exit_code;
        int signal;
        bool executed;        /* the command was exec'd */
        const JobRun *run;    /* as written to run.json; NULL when it was not */
        bool dead;            /* the teardown was confirmed */
        TeardownMethod method;
        uint64_t confirmed_at; /* when, if dead; 0: at publishing */
        const char *reason;   /* for failed; NULL for none */
        bool output_known;    /* the output was relayed: the two below say how much */
        uint64_t output_bytes;         /* what the command wrote */
        uint64_t output_dropped_bytes; /* of it, not kept (OutputMaxBytes=, KeepFree=) */
        JobUsage usage;                /* what it used, as far as measured */
} JobOutcome;

/* The one place the supervisor builds a result: result.json, then the
 * grant released only if dead (job_store_finish()). contained follows
 * job_contained() from the spec's mechanism and the recorded run. */
int publish_outcome(int dir_fd, const JobSpec *spec, const JobOutcome *o);

/* Setup failed before anything of the command ran: logged, published as
 * failed, not executed, and dead (the containment holds nothing). Returns
 * error. */
int publish_setup_failure(int dir_fd, const JobSpec *spec, int error, const char *step);

/* An end from outside (Kill, Stop, the wall-clock limit) confirmed, or
 * known to have failed: t into the job's teardown slot, durably, then to
 * bgrund over the control socket, which answers on it. The result that
 * follows repeats t. A slot that cannot be written tells nobody: bgrund
 * answers at the result then. */
void publish_teardown(int dir_fd, InputControl *ic, const JobTeardown *t);
