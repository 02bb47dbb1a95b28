/* SPDX-License-Identifier: MIT */
#pragma once

/* Printing for people on stdout: a job's record as labelled lines, the job
 * list as a table (or as JSON). */

#include <json-c/json.h>
#include <stddef.h>

typedef struct JobListEntry {
        const char *id, *session, *status, *command, *path;
        json_object *record;  /* its Get (list --json, a queued job's place); NULL: none */
        bool outcome;         /* ListJobsPagedEx's: the four below are known */
        int32_t exit_code, signal;
        uint64_t started_at, finished_at;
} JobListEntry;

/* Prints s with control characters shown as spaces, cut to max_columns
 * (SIZE_MAX: no limit) with "..." at the end. Columns are counted per UTF-8
 * character, which is right for everything but wide glyphs. */
void print_cell(const char *s, size_t max_columns);

/* A record (see record.h) as labelled lines; id names the job if the
 * record does not. */
void print_record(json_object *rec, const char *id);

/* One JSON document on stdout: pretty on a terminal, else one line. */
int print_json(json_object *obj);

int print_job_list(const JobListEntry *jobs, size_t n);
int print_job_list_json(const JobListEntry *jobs, size_t n);
