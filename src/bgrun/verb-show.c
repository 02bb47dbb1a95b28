/* SPDX-License-Identifier: MIT */
/* bgrun status and list: a job's record, the jobs. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "call.h"
#include "job-list.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "print.h"
#include "record.h"
#include "record-keys.h"
#include "verbs.h"

int verb_status(sd_bus *bus, const Args *args) {
        _cleanup_json_ json_object *rec = NULL;
        int r;

        r = get_record(bus, args->words[1], &rec);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(rec);

        print_record(rec, args->words[1]);
        return EXIT_SUCCESS;
}

int verb_list(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0, k = 0;
        int r;

        r = list_all(bus, args->session ?: "", !args->json, &pages, &jobs, &n);
        if (r < 0)
                return r;

        /* --status: a row has it, no call needed. */
        for (size_t i = 0; i < n; i++)
                if (!args->status || streq(jobs[i].status, args->status))
                        jobs[k++] = jobs[i];
        n = k;

        /* --json: each row's record (a Get each, pipelined); the table:
         * what the listing carries, and the records of the queued rows
         * alone, for their places (older bgrund: every row's). */
        r = list_get_records(bus, jobs, n, !args->json && n > 0 && jobs[0].outcome);
        if (r >= 0)
                r = args->json ? print_job_list_json(jobs, n) : print_job_list(jobs, n);
        job_records_done(jobs, n);
        return r;
}
