/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-listing.h"
#include "bus-peer.h"
#include "bus-service.h"
#include "job-id.h"
#include "macro.h"
#include "list.h"
#include "log.h"
#include "owner.h"

typedef struct ListFilter {
        const char *session; /* "" for every session */
        uid_t uid;
        bool admin;
} ListFilter;

/* An answer being built, a slice a turn. */
typedef struct Listing {
        BusService *service;
        struct Listing *next, *prev;   /* BusService.listings */
        sd_event_source *turn;
        sd_bus_message *call;          /* answered with an error if the answer cannot be built */
        sd_bus_message *reply;         /* its array open */
        ListFilter filter;
        char *session;                 /* filter.session's */
        Job *cursor;                   /* the next job to look at; NULL: the end */
        uint32_t left;                 /* entries it may still append */
        bool paged;                    /* ListJobsPaged: "after" follows the array */
        bool outcome;                  /* ListJobsPagedEx: each entry with its exit and times */
        char last_id[JOB_ID_MAX];      /* the last appended, for "after" */
        char *caller;                  /* the caller's connection name: its listings are counted */
} Listing;

static bool filter_matches(const ListFilter *f, const Job *j) {
        return (f->admin || j->owner == f->uid) && (!*f->session || streq(f->session, j->session_id));
}

/* Who is asking, and whether they see other owners' jobs. polkit is asked
 * for every caller but root whatever jobs exist (its answer cached for the
 * sender a while): asked only when someone else had a job, the answer's
 * delay would tell others' comings and goings. -EINPROGRESS while polkit is
 * being asked. */
static int read_filter(BusService *s, sd_bus_message *m, const char *session, ListFilter *ret,
                       sd_bus_error *error) {
        uid_t uid;
        int r = bus_caller_uid(s, m, &uid, error);
        if (r < 0)
                return r;
        int admin = caller_is_admin(s, m, uid);
        if (admin < 0)
                return admin;
        *ret = (ListFilter) { .session = session, .uid = uid, .admin = admin > 0 };
        return 0;
}

/* The jobs a listing walks, oldest first: an admin's, every job; anyone
 * else's, their own alone, so a listing costs its caller's jobs, whatever
 * others hold (and tells nothing of them by its time). */
static Job *walk_first(BusService *s, const ListFilter *f) {
        if (f->admin)
                return s->runtime->all.head;
        Owner *o = owner_get(&s->runtime->owners, f->uid);
        return o ? o->jobs.head : NULL;
}

static Job *walk_next(const ListFilter *f, const Job *j) {
        return f->admin ? j->all_next : j->owner_next;
}

static int append_job(sd_bus_message *reply, const Job *j, bool outcome) {
        char path[BUS_JOB_PATH_MAX];
        if (outcome)
                return sd_bus_message_append(reply, "(ssssoiitt)", j->id, j->session_id,
                                             job_status_to_string(j->status), j->command_head,
                                             bus_job_path(j->id, path), (int32_t) (job_is_ended(j) ? j->exit_code : -1),
                                             (int32_t) (job_is_ended(j) ? j->signal : 0), j->started_at, j->finished_at);
        return sd_bus_message_append(reply, "(sssso)", j->id, j->session_id, job_status_to_string(j->status),
                                     j->command_head, bus_job_path(j->id, path));
}

static Listing *listing_free(Listing *l) {
        if (!l)
                return NULL;
        LIST_REMOVE(l->service->listings, l);
        sd_event_source_disable_unref(l->turn);
        sd_bus_message_unref(l->call);
        sd_bus_message_unref(l->reply);
        free(l->session);
        free(l->caller);
        free(l);
        return NULL;
}

/* The last slice: the array closed, "after" for a page, sent. */
static int listing_finish(Listing *l) {
        const ListFilter *f = &l->filter;
        /* Another page only if something is left to show. */
        Job *j = l->cursor;
        while (j && !filter_matches(f, j))
                j = walk_next(f, j);
        int r = sd_bus_message_close_container(l->reply);
        if (r >= 0 && l->paged)
                r = sd_bus_message_append(l->reply, "s", j && l->last_id[0] ? l->last_id : "");
        if (r >= 0)
                r = sd_bus_send(NULL, l->reply, NULL);
        if (r < 0)
                log_debug_errno(r, "Cannot send a listing: %m");
        listing_free(l);
        return 0;
}

/* One slice: at most BUS_LISTING_SLICE entries, BUS_LISTING_WALK jobs. */
static int on_turn(sd_event_source *source, void *userdata) {
        Listing *l = userdata;
        const ListFilter *f = &l->filter;
        unsigned appended = 0, walked = 0;
        int r = 0;
        for (; r >= 0 && l->cursor && l->left > 0 && appended < BUS_LISTING_SLICE && walked < BUS_LISTING_WALK;
             walked++, l->cursor = walk_next(f, l->cursor)) {
                if (!filter_matches(f, l->cursor))
                        continue;
                r = append_job(l->reply, l->cursor, l->outcome);
                strcpy(l->last_id, l->cursor->id);
                l->left--;
                appended++;
        }
        if (r < 0) {
                log_warning_errno(r, "Cannot build a listing: %m");
                (void) sd_bus_reply_method_errnof(l->call, r, "Cannot build the listing: %m");
                listing_free(l);
                return 0;
        }
        if (!l->cursor || l->left == 0)
                return listing_finish(l);
        return 0;
}

/* Start answering call with the jobs from first on, at most max: 1, or
 * LimitExceeded for a connection with BUS_LISTINGS_PER_CONNECTION under way
 * already, or a uid with BUS_LISTINGS_PER_UID over its connections (what a
 * caller makes bgrund hold is bounded as it asks, however many connections
 * it opens). */
static int listing_start(BusService *s, sd_bus_message *call, const ListFilter *f, Job *first, uint32_t max,
                         bool paged, bool outcome, sd_bus_error *error) {
        /* By its name: every caller on the bus comes through bgrund's one
         * connection to the bus daemon. */
        const char *caller = bus_caller_name(s, call);
        if (!caller)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED, "The caller has no connection name");
        unsigned n = 0, n_uid = 0;
        for (Listing *k = s->listings; k; k = k->next) {
                n += streq(k->caller, caller);
                n_uid += k->filter.uid == f->uid;
        }
        if (n >= BUS_LISTINGS_PER_CONNECTION)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "%u listings of this connection are under way; wait for their answers", n);
        if (n_uid >= BUS_LISTINGS_PER_UID)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "%u listings of uid %u are under way; wait for their answers", n_uid,
                                         (unsigned) f->uid);
        Listing *l = calloc(1, sizeof(Listing));
        if (!l)
                return -ENOMEM;
        l->service = s;
        l->call = sd_bus_message_ref(call);
        LIST_PREPEND(s->listings, l);
        l->filter = *f;
        l->session = strdup(f->session);
        l->caller = strdup(caller);
        l->cursor = first;
        l->left = max;
        l->paged = paged;
        l->outcome = outcome;
        int r = l->session && l->caller ? 0 : -ENOMEM;
        l->filter.session = l->session;
        if (r >= 0)
                r = sd_bus_message_new_method_return(call, &l->reply);
        if (r >= 0)
                r = sd_bus_message_open_container(l->reply, 'a', outcome ? "(ssssoiitt)" : "(sssso)");
        /* Below every message waiting: one slice a turn of the loop. */
        if (r >= 0)
                r = sd_event_add_defer(s->runtime->event, &l->turn, on_turn, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->turn, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r >= 0) /* a defer source is one-shot until told otherwise */
                r = sd_event_source_set_enabled(l->turn, SD_EVENT_ON);
        if (r < 0) {
                listing_free(l);
                return r;
        }
        (void) sd_event_source_set_description(l->turn, "listing");
        return 1;
}

void bus_listings_job_leaves(BusService *s, Job *j) {
        for (Listing *l = s->listings; l; l = l->next)
                if (l->cursor == j)
                        l->cursor = walk_next(&l->filter, j);
}

void bus_listings_free(BusService *s) {
        while (s->listings)
                listing_free(s->listings);
}

int bus_method_list_jobs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const char *session;
        ListFilter f;
        int r = sd_bus_message_read(m, "s", &session);
        if (r >= 0)
                r = read_filter(s, m, session, &f, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;

        size_t n = 0;
        for (Job *j = walk_first(s, &f); j; j = walk_next(&f, j))
                n += filter_matches(&f, j);
        if (n > BUS_LIST_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "The listing has %zu jobs, more than ListJobs answers (%d); use ListJobsPaged",
                                         n, BUS_LIST_MAX);
        return listing_start(s, m, &f, walk_first(s, &f), BUS_LIST_MAX, false, false, error);
}

int bus_method_list_jobs_paged(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        bool outcome = streq(sd_bus_message_get_member(m), "ListJobsPagedEx");
        const char *session, *after;
        uint32_t max;
        ListFilter f;
        int r = sd_bus_message_read(m, "ssu", &session, &after, &max);
        if (r < 0)
                return r;
        if (max == 0 || max > BUS_PAGE_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS, "max must be from 1 to %d", BUS_PAGE_MAX);
        r = read_filter(s, m, session, &f, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;

        /* The page starts after a job the caller may see, or at the start. */
        Job *j = walk_first(s, &f);
        if (*after) {
                Job *a = job_id_is_valid(after) ? runtime_find_job(s->runtime, after) : NULL;
                if (!a || !(f.admin || a->owner == f.uid))
                        return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB,
                                                 "No such job to page after (forgotten since? start again with \"\")");
                j = walk_next(&f, a);
        }
        return listing_start(s, m, &f, j, max, true, outcome, error);
}
