/* SPDX-License-Identifier: MIT */
/* bgrun wait: until jobs end (or the first of them), and how each ended. */

#include <stdio.h>
#include <stdlib.h>

#include "call.h"
#include "duration.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "print.h"
#include "record.h"
#include "time-util.h"
#include "verbs.h"

/* Waits in turns of at most this long per job with --any, so that one
 * job's Wait does not hide another's end. */
#define WAIT_ANY_SLICE_USEC (250 * USEC_PER_MSEC)

/* Waits for the jobs: each until it ended, or with --any until the first
 * of them did (*ended_first its index, SIZE_MAX if none did in time). */
static int wait_jobs(sd_bus *bus, const Args *args, json_object **recs, size_t n, size_t *ended_first) {
        uint64_t deadline = USEC_INFINITY;
        int r;

        if (args->timeout_usec != USEC_INFINITY && args->timeout_usec < USEC_INFINITY - now_monotonic_usec())
                deadline = now_monotonic_usec() + args->timeout_usec;

        if (args->any && n > 1) {
                /* Round robin: a short Wait each until one has ended. */
                for (;;) {
                        uint64_t now = now_monotonic_usec();
                        uint64_t slice = WAIT_ANY_SLICE_USEC;

                        if (deadline != USEC_INFINITY)
                                slice = now >= deadline ? 0 : MIN(slice, deadline - now);
                        for (size_t i = 0; i < n && *ended_first == SIZE_MAX; i++) {
                                json_object_put(recs[i]);
                                recs[i] = NULL;
                                r = wait_record(bus, args->words[i + 1], slice / n, &recs[i]);
                                if (r < 0)
                                        return r;
                                if (!record_is_running(recs[i]))
                                        *ended_first = i;
                        }
                        if (*ended_first != SIZE_MAX || (deadline != USEC_INFINITY && now_monotonic_usec() >= deadline))
                                break;
                }
        } else
                for (size_t i = 0; i < n; i++) {
                        uint64_t now = now_monotonic_usec(), left = USEC_INFINITY;

                        if (deadline != USEC_INFINITY)
                                left = now >= deadline ? 0 : deadline - now;
                        r = wait_until_ended(bus, args->words[i + 1], left, &recs[i]);
                        if (r < 0)
                                return r;
                        if (args->any && !record_is_running(recs[i]))
                                *ended_first = i;
                }
        return 0;
}

int verb_wait(sd_bus *bus, const Args *args) {
        size_t n = args->n_words - 1;
        _cleanup_free_ json_object **recs = calloc(n, sizeof(json_object *));
        int ret = EXIT_SUCCESS, r = 0;
        size_t ended_first = SIZE_MAX;
        char buf[128];

        if (!recs)
                return log_oom();
        r = wait_jobs(bus, args, recs, n, &ended_first);
        if (r < 0)
                goto finish;

        if (args->json) {
                if (ended_first != SIZE_MAX)
                        r = print_json(recs[ended_first]);
                else if (n == 1)
                        r = print_json(recs[0]);
                else {
                        _cleanup_json_ json_object *array = json_object_new_array();

                        if (!array) {
                                r = log_oom();
                                goto finish;
                        }
                        for (size_t i = 0; i < n; i++)
                                if (json_object_array_add(array, json_object_get(recs[i])) < 0) {
                                        r = log_oom();
                                        goto finish;
                                }
                        r = print_json(array);
                }
                if (r < 0)
                        goto finish;
        }

        if (args->any) {
                if (ended_first == SIZE_MAX) {
                        log_error("No job of %zu ended within %s.", n,
                                  args->timeout_string ?: format_duration(buf, sizeof buf, args->timeout_usec));
                        r = BGRUN_EXIT_STILL_RUNNING;
                        goto finish;
                }
                if (!args->json) {
                        format_outcome(recs[ended_first], buf, sizeof buf);
                        printf("Job %s %s.\n", record_id(recs[ended_first], args->words[ended_first + 1]), buf);
                }
                r = record_exit_status(recs[ended_first]);
                goto finish;
        }

        size_t failed = 0;
        for (size_t i = 0; i < n; i++) {
                const char *id = record_id(recs[i], args->words[i + 1]);

                if (record_is_running(recs[i])) {
                        log_error("Job %s still running after %s.", id,
                                  args->timeout_string ?: format_duration(buf, sizeof buf, args->timeout_usec));
                        ret = BGRUN_EXIT_STILL_RUNNING;
                        continue;
                }
                format_outcome(recs[i], buf, sizeof buf);
                if (!args->json)
                        printf("Job %s %s.\n", id, buf);
                int status = record_exit_status(recs[i]);
                if (status != EXIT_SUCCESS)
                        failed++;
                if (ret == EXIT_SUCCESS)
                        ret = status;
        }
        /* Of several, which failed: each named (the exit status is only
         * the first's, in the order given). */
        if (n > 1 && failed > 0) {
                fflush(stdout);
                log_error("%zu of %zu jobs did not succeed:", failed, n);
                for (size_t i = 0; i < n; i++)
                        if (!record_is_running(recs[i]) && record_exit_status(recs[i]) != EXIT_SUCCESS) {
                                format_outcome(recs[i], buf, sizeof buf);
                                log_error("  %s %s", record_id(recs[i], args->words[i + 1]), buf);
                        }
        }
        r = ret;

finish:
        for (size_t i = 0; i < n; i++)
                json_object_put(recs[i]);
        return r;
}
