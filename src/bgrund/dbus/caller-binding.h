/* SPDX-License-Identifier: MIT */
#pragma once

/* Jobs launched with BindToCaller, by the unique name of the connection that
 * launched them: the D-Bus face's own table (a unique name is the bus's
 * word; the lifecycle never sees it). bus-caller-watch.c learns that a
 * name is gone and this stops its jobs, each with its own StopSignal and
 * StopGraceUSec. Over the one map (basic/map.h), so that a name's end costs
 * O(its jobs), never a pass over all jobs. A bound job leaves the table when
 * it ends or is discarded. */

#include <stdbool.h>
#include <stddef.h>

#include "map.h"

typedef struct Job Job;
typedef struct CallerName CallerName;

/* One bound job: its entry in its name's list, and Job.caller_bound. */
typedef struct CallerBound {
        CallerName *name;
        Job *job;
        struct CallerBound *next, *prev;
} CallerBound;

typedef struct CallerBindings {
        Map names; /* CallerName by its unique name */
} CallerBindings;

/* Bind j to the connection name. *ret_new (may be NULL): the name had no
 * job bound before. -ENOMEM; -EALREADY when j is bound already. */
int caller_bindings_add(CallerBindings *b, Job *j, const char *name, bool *ret_new);

/* j no longer bound (it ended, or was discarded); nothing if it was not. */
void caller_bindings_remove(CallerBindings *b, Job *j);

/* The connection name is gone: stop every job bound to it, with its own
 * signal and grace, and forget the name. Returns how many were stopped. */
unsigned caller_bindings_gone(CallerBindings *b, const char *name);

bool caller_bindings_has(const CallerBindings *b, const char *name);

/* Free the table; the jobs are not looked at (they may be gone already). */
void caller_bindings_clear(CallerBindings *b);
