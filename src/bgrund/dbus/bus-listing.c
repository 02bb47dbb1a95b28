/* SPDX-License-Identifier: MIT */
#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-listing.h"
#include "bus-service.h"
#include "job-id.h"
#include "macro.h"
#include "owner.h"

typedef struct ListFilter {
        const char *session; /* "" for every session */
        uid_t uid;
        bool admin;
} ListFilter;

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

static int append_job(sd_bus_message *reply, const Job *j) {
        char path[BUS_JOB_PATH_MAX];
        return sd_bus_message_append(reply, "(sssso)", j->id, j->session_id,
                                     job_status_to_string(j->status), j->command_head,
                                     bus_job_path(j->id, path));
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

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sssso)");
        for (Job *j = walk_first(s, &f); r >= 0 && j; j = walk_next(&f, j))
                if (filter_matches(&f, j))
                        r = append_job(reply, j);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

int bus_method_list_jobs_paged(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
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

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sssso)");
        const Job *last = NULL;
        uint32_t n = 0;
        for (; r >= 0 && j && n < max; j = walk_next(&f, j))
                if (filter_matches(&f, j)) {
                        r = append_job(reply, j);
                        last = j;
                        n++;
                }
        /* Another page only if something is left to show. */
        while (j && !filter_matches(&f, j))
                j = walk_next(&f, j);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", j && last ? last->id : "");
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}
