/* SPDX-License-Identifier: MIT */
/* bgrun forget: ended jobs' records and output removed, by ID or all of
 * the caller's that ended. */

#include <stdio.h>
#include <stdlib.h>

#include "bgrun/bus-api.h"
#include "call.h"
#include "job-list.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "record.h"
#include "time-util.h"
#include "verbs.h"

static int forget_one(sd_bus *bus, const char *id, bool quiet_if_gone) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = manager_new_call(bus, "Forget", &m, "s", id);
        if (r < 0)
                return r;

        r = manager_call_raw(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), &error, NULL);
        if (r >= 0)
                return 1;
        /* Gone meanwhile (retention, another forget): nothing to do. */
        if (quiet_if_gone && sd_bus_error_has_name(&error, BGRUN_ERROR_NO_SUCH_JOB))
                return 0;
        return log_call_error("Forget", id, &error, r);
}

static int forget_ended(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0, k = 0, forgotten = 0;
        uint64_t now = now_realtime_usec();
        int ret = EXIT_SUCCESS, r;

        uid_t uid;

        r = bus_caller_uid(bus, &uid);
        if (r < 0)
                return r;
        r = list_all(bus, args->session ?: "", false, &pages, &jobs, &n);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++)
                if (!streq(jobs[i].status, "running") && !streq(jobs[i].status, "queued"))
                        jobs[k++] = jobs[i];
        n = k;

        /* An admin sees every user's jobs; --ended is the caller's own, as
         * KillSession is: the records say whose (Gets sent together). */
        r = list_get_records(bus, jobs, n, false);
        if (r < 0) {
                job_records_done(jobs, n);
                return r;
        }

        for (size_t i = 0; i < n; i++) {
                json_object *rec = jobs[i].record;
                uint64_t owner, finished_at;

                if (!rec || record_is_running(rec) || !dict_get_uint(rec, &record_keys[RECORD_KEY_OWNER], &owner) ||
                    owner != (uint64_t) uid)
                        continue;

                if ((args->options_seen & OPTION_OLDER_THAN) &&
                    (!dict_get_uint(rec, &record_keys[RECORD_KEY_FINISHED_AT], &finished_at) || finished_at == 0 ||
                     now < finished_at || now - finished_at < args->older_than_usec))
                        continue;

                r = forget_one(bus, jobs[i].id, true);
                if (r < 0) {
                        ret = r;
                        continue;
                }
                forgotten += r;
        }
        job_records_done(jobs, n);

        printf("Forgot %zu ended job%s.\n", forgotten, forgotten == 1 ? "" : "s");
        return ret;
}

int verb_forget(sd_bus *bus, const Args *args) {
        int ret = EXIT_SUCCESS;

        if (args->ended)
                return forget_ended(bus, args);

        for (size_t i = 1; i < args->n_words; i++) {
                int r = forget_one(bus, args->words[i], false);
                if (r < 0)
                        ret = r;
        }
        return ret;
}
