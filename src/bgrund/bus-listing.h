/* SPDX-License-Identifier: MIT */
#pragma once

/* ListJobs, answered in batches. An ended job's command lives only in its
 * record on disk, and reading thousands of records at once would hold the
 * event loop, and every other caller, for as long (about 30 µs a record).
 * Past the first batch the rest is read between other work, a batch per
 * turn of the event loop, and the reply goes out when the last is in. */

#include <stddef.h>
#include <systemd/sd-bus.h>

typedef struct BusService BusService;
typedef struct Job Job;

/* Answer call with (id, session, status, command, path) of jobs[0..n), in
 * that order. Jobs forgotten while the answer is built are left out. Returns
 * 1 once the call is answered or will be; < 0 (nothing sent) on failure. */
int bus_listing_start(BusService *s, sd_bus_message *call, Job *const *jobs, size_t n);

/* Drop the answers still being built (on shutdown). */
void bus_listings_free(BusService *s);
