/* SPDX-License-Identifier: MIT */
#pragma once

/* Jobs launched with BindToCaller, as a list that their caller's record
 * holds (BusClient.bound, bus-client.h: one record per connection holds
 * all that must go with it). When the connection goes (bus-callers.c,
 * the one watch of departures), its jobs are stopped, each with its own
 * StopSignal and StopGraceUSec: O(its jobs), never a pass over all jobs. A
 * bound job leaves its list when it ends or is discarded. No bus here: the
 * unit test drives it alone. */

#include <stdbool.h>

typedef struct Job Job;
typedef struct CallerBound CallerBound;

/* One connection's bound jobs. */
typedef struct CallerJobs {
        CallerBound *head;
        unsigned n;
} CallerJobs;

/* One bound job: its entry in its caller's list, and Job.caller_bound. */
struct CallerBound {
        CallerJobs *list;
        Job *job;
        CallerBound *next, *prev;
};

/* Bind j to the connection whose list l is. -ENOMEM; -EALREADY when j is
 * bound already. */
int caller_jobs_add(CallerJobs *l, Job *j);

/* j no longer bound (it ended, or was discarded): the list it left, NULL
 * if it was not bound. */
CallerJobs *caller_jobs_remove(Job *j);

/* The connection (named name, for the log) is gone: stop every job of l
 * with its own signal and grace, and empty l. Returns how many were
 * stopped. */
unsigned caller_jobs_stop(CallerJobs *l, const char *name);

/* Empty l without looking at its jobs (they may be gone already). */
void caller_jobs_clear(CallerJobs *l);
