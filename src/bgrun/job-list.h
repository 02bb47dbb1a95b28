/* SPDX-License-Identifier: MIT */
#pragma once

/* The jobs the caller may see, read from bgrund page by page
 * (ListJobsPaged), for list and forget --ended. */

#include <stddef.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "print.h"

/* The replies a listing's entries point into, kept until it is printed. */
typedef struct Pages {
        sd_bus_message **replies;
        size_t n;
} Pages;

void pages_done(Pages *p);

/* Every job of session ("": any) onto *jobs (*n of them), whose strings
 * point into pages; with outcome, each with its exit and times
 * (ListJobsPagedEx, from bgrund's memory; from an older bgrund none). */
int list_all(sd_bus *bus, const char *session, bool outcome, Pages *pages, JobListEntry **jobs, size_t *n);

/* Each job's record (Get), pipelined, into jobs[].record (with queued_only,
 * the queued jobs' alone, for their places): for list --json's exit_code,
 * started_at, finished_at. A job gone since the listing gets none. */
int list_get_records(sd_bus *bus, JobListEntry *jobs, size_t n, bool queued_only);
void job_records_done(JobListEntry *jobs, size_t n);
