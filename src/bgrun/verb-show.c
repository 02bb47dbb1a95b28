/* SPDX-License-Identifier: MIT */
/* bgrun status, logs and list: a job's record, its output, the jobs. */

#include <stdlib.h>

#include "call.h"
#include "job-list.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output.h"
#include "print.h"
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

int verb_logs(sd_bus *bus, const Args *args) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        _cleanup_json_ json_object *first = NULL, *rec = NULL;
        int r;

        r = output_open(bus, args->words[1], 0, &src, args->follow ? &first : NULL);
        if (r < 0)
                return r;

        if (args->options_seen & OPTION_LINES) {
                r = output_seek_tail(bus, &src, args->lines);
                if (r < 0)
                        return r;
        }

        if (args->follow)
                r = output_follow(bus, &src, NULL, TAKE_PTR(first), &rec);
        else
                r = output_pump(bus, &src, 0);
        if (r < 0)
                return r;

        return EXIT_SUCCESS;
}

int verb_list(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0;
        int r;

        r = list_all(bus, args->session ?: "", &pages, &jobs, &n);
        if (r < 0)
                return r;

        if (args->json)
                return print_job_list_json(jobs, n);
        return print_job_list(jobs, n);
}

