/* SPDX-License-Identifier: MIT */
/* The jobs the caller may see, page by page. */

#include <stdlib.h>

#include "call.h"
#include "call-error.h"
#include "job-list.h"
#include "log.h"

/* Jobs per ListJobsPaged call: bgrund's most. */
#define LIST_PAGE_SIZE 1000

void pages_done(Pages *p) {
        for (size_t i = 0; i < p->n; i++)
                sd_bus_message_unref(p->replies[i]);
        free(p->replies);
}

/* One page of ListJobsPaged after `after` onto jobs; its reply into pages.
 * *ret_next is the next page's `after`, "" at the end (pointing into the
 * reply). */
static int list_page(sd_bus *bus, const char *session, const char *after, bool *outcome, Pages *pages,
                     JobListEntry **jobs, size_t *n, const char **ret_next) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const char *method = *outcome ? "ListJobsPagedEx" : "ListJobsPaged";
        int r = manager_new_call(bus, method, &m, "ssu", session, after, (uint32_t) LIST_PAGE_SIZE);
        if (r < 0)
                return r;
        if (*outcome) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                r = manager_call_raw(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), &error, &reply);
                if (r < 0 && sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_METHOD)) {
                        /* An older bgrund: the plain listing. */
                        *outcome = false;
                        return list_page(bus, session, after, outcome, pages, jobs, n, ret_next);
                }
                if (r < 0)
                        return log_call_error(method, NULL, &error, r);
        } else {
                r = manager_call(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), NULL, &reply);
                if (r < 0)
                        return r;
        }

        sd_bus_message **p = reallocarray(pages->replies, pages->n + 1, sizeof(sd_bus_message *));
        if (!p)
                return log_oom();
        pages->replies = p;
        pages->replies[pages->n++] = sd_bus_message_ref(reply);

        r = sd_bus_message_enter_container(reply, 'a', *outcome ? "(ssssoiitt)" : "(sssso)");
        if (r < 0)
                return log_parse_error(method, r);
        for (;;) {
                JobListEntry e = { .outcome = *outcome };
                if (*outcome)
                        r = sd_bus_message_read(reply, "(ssssoiitt)", &e.id, &e.session, &e.status, &e.command, &e.path,
                                                &e.exit_code, &e.signal, &e.started_at, &e.finished_at);
                else
                        r = sd_bus_message_read(reply, "(sssso)", &e.id, &e.session, &e.status, &e.command, &e.path);
                if (r < 0)
                        return log_parse_error(method, r);
                if (r == 0)
                        break;
                JobListEntry *q = reallocarray(*jobs, *n + 1, sizeof(JobListEntry));
                if (!q)
                        return log_oom();
                *jobs = q;
                (*jobs)[(*n)++] = e;
        }
        r = sd_bus_message_exit_container(reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", ret_next);
        if (r < 0)
                return log_parse_error(method, r);
        return 0;
}

int list_all(sd_bus *bus, const char *session, bool outcome, Pages *pages, JobListEntry **jobs, size_t *n) {
        const char *after = "";

        /* Always in pages: one answer for any number of jobs could pass
         * what the bus carries. */
        do {
                int r = list_page(bus, session, after, &outcome, pages, jobs, n, &after);
                if (r < 0)
                        return r;
        } while (*after);
        return 0;
}

/* Gets in flight at once: one round trip for many, within what a bus
 * lets a connection have pending. */
#define GET_WINDOW 64

static bool wanted(const JobListEntry *j, bool queued_only) {
        return !queued_only || streq(j->status, "queued");
}

int list_get_records(sd_bus *bus, JobListEntry *jobs, size_t n, bool queued_only) {
        PendingCall calls[GET_WINDOW] = {};
        size_t sent = 0, done = 0;
        int r = 0;

        while (done < n) {
                for (; sent < n && sent - done < GET_WINDOW; sent++) {
                        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                        if (!wanted(&jobs[sent], queued_only))
                                continue;

                        r = manager_new_call(bus, "Get", &m, "s", jobs[sent].id);
                        if (r >= 0)
                                r = manager_call_send(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT),
                                                      &calls[sent % GET_WINDOW]);
                        if (r < 0)
                                goto finish;
                }
                if (!wanted(&jobs[done], queued_only)) {
                        done++;
                        continue;
                }
                /* A job forgotten since the listing has no record: none;
                 * nor has one whose record bgrund cannot read (said). */
                r = pending_call_dict(bus, &calls[done % GET_WINDOW], "Get", jobs[done].id,
                                      PENDING_MISSING_OR_UNREADABLE_OK, &jobs[done].record);
                pending_call_done(&calls[done % GET_WINDOW]);
                if (r < 0)
                        goto finish;
                done++;
        }

finish:
        for (size_t i = 0; i < GET_WINDOW; i++)
                pending_call_done(&calls[i]);
        return r;
}

void job_records_done(JobListEntry *jobs, size_t n) {
        for (size_t i = 0; jobs && i < n; i++)
                (void) json_object_put(jobs[i].record);
}
