/* SPDX-License-Identifier: MIT */
#include "bus-listing.h"
#include "bus-service.h"
#include "list.h"
#include "log.h"
#include "macro.h"

/* Records per turn of the event loop: a few milliseconds of disk reads. */
#define LISTING_BATCH 128

typedef struct JobListing {
        struct JobListing *next, *prev;
        BusService *service;
        sd_bus_message *call;
        sd_bus_message *reply;
        char (*ids)[JOB_ID_MAX]; /* what is left to list, by id: a job may be forgotten meanwhile */
        size_t n_ids, done;
        sd_event_source *source;
} JobListing;

static void job_listing_free(JobListing *l) {
        LIST_REMOVE(l->service->listings, l);
        sd_event_source_disable_unref(l->source);
        sd_bus_message_unref(l->call);
        sd_bus_message_unref(l->reply);
        free(l->ids);
        free(l);
}

void bus_listings_free(BusService *s) {
        while (s->listings)
                job_listing_free(s->listings);
}

static int append_job(sd_bus_message *reply, Job *j) {
        _cleanup_(job_spec_done) JobSpec spec = {};
        const char *command;
        /* Status is in memory; an ended job's command costs one read. */
        if (j->live)
                command = j->live->spec.command;
        else if (job_read_spec(j, &spec) >= 0)
                command = spec.command;
        else
                return 0; /* a record that vanished from disk is not listed */
        char path[BUS_JOB_PATH_MAX];
        return sd_bus_message_append(reply, "(sssso)", j->id, j->session_id,
                                     job_status_to_string(j->live ? JOB_RUNNING : j->status), command,
                                     bus_job_path(j->id, path));
}

/* Send the reply, or an error in its place: the call is answered either way. */
static void send_reply(sd_bus_message *call, sd_bus_message *reply, int r) {
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        if (r < 0)
                (void) sd_bus_reply_method_errnof(call, r, "Cannot list the jobs: %m");
}

static int on_batch(sd_event_source *s, void *userdata);

/* A new defer source per batch, at normal priority: a fresh one queues
 * behind whatever is already pending (bus traffic included), so neither the
 * listing nor other callers can starve the other. */
static int schedule_batch(JobListing *l) {
        l->source = sd_event_source_disable_unref(l->source);
        return sd_event_add_defer(l->service->runtime->event, &l->source, on_batch, l);
}

static int on_batch(sd_event_source *s, void *userdata) {
        JobListing *l = userdata;
        int r = 0;
        for (size_t end = MIN(l->n_ids, l->done + LISTING_BATCH); r >= 0 && l->done < end; l->done++) {
                Job *j = runtime_find_job(l->service->runtime, l->ids[l->done]);
                if (j)
                        r = append_job(l->reply, j);
        }
        if (r >= 0 && l->done < l->n_ids)
                r = schedule_batch(l);
        if (r < 0 || l->done == l->n_ids) {
                send_reply(l->call, l->reply, r);
                job_listing_free(l);
        }
        return 0;
}

int bus_listing_start(BusService *s, sd_bus_message *call, Job *const *jobs, size_t n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sssso)");
        size_t i = 0;
        for (; r >= 0 && i < MIN(n, (size_t) LISTING_BATCH); i++)
                r = append_job(reply, jobs[i]);
        if (r < 0)
                return r;
        if (i == n) {
                send_reply(call, reply, 0);
                return 1;
        }

        /* The rest between other work. */
        JobListing *l = calloc(1, sizeof(JobListing));
        if (!l)
                return -ENOMEM;
        *l = (JobListing) { .service = s, .n_ids = n - i };
        l->ids = calloc(l->n_ids, sizeof *l->ids);
        if (!l->ids) {
                free(l);
                return -ENOMEM;
        }
        for (size_t k = 0; k < l->n_ids; k++)
                memcpy(l->ids[k], jobs[i + k]->id, JOB_ID_MAX);
        LIST_PREPEND(s->listings, l);

        r = schedule_batch(l);
        if (r < 0) {
                job_listing_free(l);
                return r;
        }
        l->call = sd_bus_message_ref(call);
        l->reply = TAKE_PTR(reply);
        return 1;
}
