/* SPDX-License-Identifier: MIT */
#pragma once

/* ListJobs and ListJobsPaged. Both are answered from memory (each job keeps
 * its session and the first JOB_COMMAND_HEAD_MAX bytes of its command), and
 * both are bounded: ListJobs refuses more than BUS_LIST_MAX entries with
 * LimitExceeded, ListJobsPaged gives at most BUS_PAGE_MAX per call, so no
 * answer can pass what the bus accepts. An answer is built in slices of
 * BUS_LISTING_SLICE entries, one a turn of the loop below every message
 * waiting, so that a long listing holds up no other caller (a job forgotten
 * meanwhile is passed over; one launched meanwhile may be in it); at most
 * BUS_LISTINGS_PER_CONNECTION of a connection, BUS_LISTINGS_PER_UID of a
 * uid, at once. */

#include <systemd/sd-bus.h>

#include "job.h"

#define BUS_LIST_MAX 5000
#define BUS_PAGE_MAX 1000
/* Entries appended a turn, and jobs looked at: a fraction of a ms. */
#define BUS_LISTING_SLICE 128
#define BUS_LISTING_WALK (8 * BUS_LISTING_SLICE)
/* Listings a connection, and a uid over all its connections, may have
 * under way at once: each holds its answer as it grows (up to about
 * 0.5 MB for BUS_LIST_MAX entries). */
#define BUS_LISTINGS_PER_CONNECTION 16
#define BUS_LISTINGS_PER_UID 32

typedef struct BusService BusService;

int bus_method_list_jobs(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* ListJobsPaged, and ListJobsPagedEx: each entry with its exit code,
 * signal, started_at and finished_at too, from memory, for a list's table. */
int bus_method_list_jobs_paged(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* j leaves the runtime's lists (forgotten, or freed), still linked: a
 * listing under way that would look at it next goes on past it. */
void bus_listings_job_leaves(BusService *s, Job *j);
/* Every listing under way dropped, unanswered (bgrund is going). */
void bus_listings_free(BusService *s);
