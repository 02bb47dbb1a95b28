/* SPDX-License-Identifier: MIT */
#pragma once

/* BindToCaller on the bus: which connection launched a bound job (its
 * unique name, kept in the job's spec so a restart finds it), and the job
 * in that connection's record (bus-client.h); when the connection closes
 * (told by bus-callers.c, the one watch of departures), its jobs are
 * stopped with the rest of what it held. */

#include <systemd/sd-bus.h>

#include "job-record.h"

typedef struct BusService BusService;
typedef struct Job Job;

/* Once bus-callers.c watches departures, before the name is requested:
 * take up the bindings of the jobs loaded from the store: on the bus, each caller's name is asked
 * after (NameHasOwner, asynchronously) and the jobs of those gone are
 * stopped; a --listen connection does not outlive bgrund, so its jobs'
 * bindings end and they run on (bind_to_caller false in their spec). */
int bus_caller_watch_start(BusService *s);

/* For a Launch with BindToCaller (spec->bind_to_caller): the caller's name
 * into spec->caller, or LimitExceeded in error when its connection's end
 * cannot be watched (bus_callers_watched() false). Before the job is created. */
int bus_caller_watch_prepare(BusService *s, sd_bus_message *m, JobSpec *spec, sd_bus_error *error);

/* The job, created from a prepared spec by the call m, is bound from now
 * on: held by the record of m's connection (bus-client.h). */
int bus_caller_watch_bind(BusService *s, sd_bus_message *m, Job *j);

/* The job ended or was discarded: bound no more. */
void bus_caller_watch_job_done(BusService *s, Job *j);
