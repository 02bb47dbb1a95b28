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

/* list --status queued: each job with its place in its queue, which its
 * record says (a Get each, pipelined: a queue is at most MaxQueuedJobs=). */
static int print_queued_list(sd_bus *bus, JobListEntry *jobs, size_t n) {
        _cleanup_free_ char *places = calloc(n + 1, 32);
        if (!places)
                return log_oom();
        int r = list_get_records(bus, jobs, n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                uint64_t place;
                if (jobs[i].record && dict_get_uint(jobs[i].record, &record_keys[RECORD_KEY_QUEUE_POSITION], &place) &&
                    place > 0) {
                        snprintf(places + 32 * i, 32, "queued (%" PRIu64 ")", place);
                        jobs[i].status = places + 32 * i;
                }
        }
        if (r >= 0)
                r = print_job_list(jobs, n);
        job_records_done(jobs, n);
        return r;
}

int verb_list(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0, k = 0;
        int r;

        r = list_all(bus, args->session ?: "", &pages, &jobs, &n);
        if (r < 0)
                return r;

        /* --status: a row has it, no call needed. */
        for (size_t i = 0; i < n; i++)
                if (!args->status || streq(jobs[i].status, args->status))
                        jobs[k++] = jobs[i];
        n = k;

        if (!args->json && !(args->status && streq(args->status, "queued")))
                return print_job_list(jobs, n);
        if (!args->json)
                return print_queued_list(bus, jobs, n);

        r = list_get_records(bus, jobs, n);
        if (r >= 0)
                r = print_job_list_json(jobs, n);
        job_records_done(jobs, n);
        return r;
}
