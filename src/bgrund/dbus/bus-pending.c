/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bus-client.h"
#include "bus-pending.h"
#include "bus-record.h"
#include "bus-service.h"
#include "list.h"
#include "output-watch.h"
#include "runtime.h"

/* A KillSession call, shared by one PendingCall on each of its jobs. */
typedef struct SessionKill {
        sd_bus_message *call;
        unsigned refs;      /* its jobs not ended yet */
        unsigned killed;
        bool dead;          /* every ended one confirmed dead */
} SessionKill;

/* The calls held on one job: the face's own map, one entry for each job
 * holding any, gone with its last call. */
struct PendingJob {
        MapNode node;                           /* BusService.pending_jobs */
        Job *job;
        QUEUE(PendingCall) calls;               /* oldest first */
};

struct PendingCall {
        PendingCall *job_next, *job_prev;       /* its job's */
        PendingCall *client_next, *client_prev; /* its connection's */
        PendingJob *entry;
        Job *job;
        BusClient *client;
        PendingKind kind;
        sd_bus_message *call;                   /* NULL for PENDING_KILL_SESSION */
        SessionKill *session_kill;              /* PENDING_KILL_SESSION */
        sd_event_source *timer;
        PendingAnswer timeout;                  /* answers call when timer fires */
};

static void job_hash(const void *key, SipHash *state) {
        map_feed_u64(state, (uint64_t) (uintptr_t) key);
}

static bool job_is(const MapNode *node, const void *key) {
        return MAP_ITEM(node, PendingJob, node)->job == key;
}

static const MapType by_job = { .hash = job_hash, .has_key = job_is };

static PendingJob *pending_job_find(BusService *s, const Job *j) {
        MapNode *node = map_get(&s->pending_jobs, j);
        return node ? MAP_ITEM(node, PendingJob, node) : NULL;
}

static PendingJob *pending_job_get(BusService *s, Job *j) {
        PendingJob *e = pending_job_find(s, j);
        if (e)
                return e;
        if (!s->pending_jobs.type)
                s->pending_jobs = MAP_INIT(&by_job);
        e = calloc(1, sizeof(PendingJob));
        if (!e)
                return NULL;
        e->job = j;
        if (map_put(&s->pending_jobs, &e->node, j) < 0) {
                free(e);
                return NULL;
        }
        return e;
}

static void pending_job_free(BusService *s, PendingJob *e) {
        (void) map_remove(&s->pending_jobs, &e->node);
        free(e);
}

/* Hang p on its job's entry and its connection's list. */
static void pending_call_link(PendingCall *p, PendingJob *e) {
        BusClient *c = p->client;
        p->entry = e;
        QUEUE_APPEND(job, e->calls, p);
        p->client_next = c->pending;
        if (c->pending)
                c->pending->client_prev = p;
        c->pending = p;
}

static void session_kill_unref(SessionKill *k, BusClient *c) {
        if (--k->refs > 0)
                return;
        if (k->call)
                (void) sd_bus_reply_method_return(k->call, "a{sv}", 2, "killed", "u", k->killed, "dead", "b",
                                                  (int) k->dead);
        sd_bus_message_unref(k->call);
        free(k);
        bus_client_count_pending(c, -1); /* it counted as one */
}

/* Free p; its connection's client goes too once it holds nothing, unless
 * the client itself is going. */
static void pending_call_free_full(PendingCall *p, bool release_client) {
        BusClient *c = p->client;
        QUEUE_REMOVE(job, p->entry->calls, p);
        if (!p->entry->calls.head)
                pending_job_free(c->service, p->entry);
        if (p->client_prev)
                p->client_prev->client_next = p->client_next;
        else
                c->pending = p->client_next;
        if (p->client_next)
                p->client_next->client_prev = p->client_prev;
        if (p->session_kill)
                session_kill_unref(p->session_kill, c);
        else
                bus_client_count_pending(c, -1);
        if (p->kind == PENDING_OUTPUT)
                output_watch_remove(c->service->runtime, p->job);
        sd_event_source_disable_unref(p->timer);
        sd_bus_message_unref(p->call);
        free(p);
        if (release_client)
                bus_client_release(c);
}

static void pending_call_free(PendingCall *p) {
        pending_call_free_full(p, true);
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        PendingCall *p = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = TAKE_PTR(p->call);
        Job *j = p->job;
        PendingAnswer timeout = p->timeout;
        pending_call_free(p);
        timeout(j, call, NULL);
        return 0;
}

/* Not ended yet: Wait answers with the record as it is. */
static void answer_wait_timeout(Job *j, sd_bus_message *call, void *userdata) {
        (void) bus_reply_record(j, call);
}

int pending_call_add(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec,
                     sd_bus_error *error) {
        return pending_call_add_full(s, j, kind, call, timeout_usec, kind == PENDING_WAIT ? answer_wait_timeout : NULL,
                                     error);
}

bool pending_calls_any(BusService *s, const Job *j, PendingKind kind) {
        const PendingJob *e = pending_job_find(s, j);
        for (const PendingCall *p = e ? e->calls.head : NULL; p; p = p->job_next)
                if (p->kind == kind)
                        return true;
        return false;
}

/* The caller's connection, if it may hold one more call (its client is
 * then the caller's to release). */
static int caller_client(BusService *s, sd_bus_message *call, BusClient **ret, sd_bus_error *error) {
        uid_t uid;
        BusClient *c;
        int r = bus_caller_uid(s, call, &uid, error);
        if (r >= 0)
                r = bus_client_get(s, call, uid, &c);
        if (r < 0)
                return r;
        r = bus_client_may_wait(c, error);
        if (r < 0) {
                bus_client_release(c);
                return r;
        }
        *ret = c;
        return 0;
}

int pending_call_add_full(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec,
                          PendingAnswer timeout, sd_bus_error *error) {
        BusClient *c;
        int r = caller_client(s, call, &c, error);
        if (r < 0)
                return r;
        PendingJob *e = pending_job_get(s, j);
        PendingCall *p = e ? calloc(1, sizeof(PendingCall)) : NULL;
        if (!p) {
                if (e && !e->calls.head)
                        pending_job_free(s, e);
                bus_client_release(c);
                return -ENOMEM;
        }
        *p = (PendingCall) { .job = j, .client = c, .kind = kind, .call = sd_bus_message_ref(call), .timeout = timeout };
        pending_call_link(p, e);
        bus_client_count_pending(c, +1);
        /* Anything past a century is forever (and would overflow the clock). */
        if (timeout && timeout_usec < 100ULL * 365 * 24 * 3600 * USEC_PER_SEC) {
                r = sd_event_add_time_relative(s->runtime->event, &p->timer, CLOCK_MONOTONIC, timeout_usec, 0,
                                               on_timeout, p);
                if (r < 0) {
                        pending_call_free(p);
                        return r;
                }
        }
        return 0;
}

void pending_calls_answer(BusService *s, Job *j, PendingKind kind, PendingAnswer answer, void *userdata) {
        pending_calls_answer_ready(s, j, kind, NULL, answer, userdata);
}

void pending_calls_answer_ready(BusService *s, Job *j, PendingKind kind, bool (*ready)(Job *j, sd_bus_message *call),
                                PendingAnswer answer, void *userdata) {
        PendingJob *e = pending_job_find(s, j);
        for (PendingCall *p = e ? e->calls.head : NULL, *next; p; p = next) {
                next = p->job_next;
                if (p->kind != kind || (ready && !ready(j, p->call)))
                        continue;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = TAKE_PTR(p->call);
                pending_call_free(p);
                answer(j, call, userdata);
        }
}

/* Going unanswered: a KillSession call it belongs to is not answered at
 * all (its caller left, or bgrund is stopping). */
static void pending_call_drop(PendingCall *p, bool release_client) {
        if (p->session_kill)
                p->session_kill->call = sd_bus_message_unref(p->session_kill->call);
        pending_call_free_full(p, release_client);
}

void pending_calls_drop(BusService *s, Job *j) {
        PendingJob *e = pending_job_find(s, j);
        /* The entry goes with its last call. */
        while (e) {
                bool last = e->calls.head == e->calls.tail;
                pending_call_drop(e->calls.head, true);
                if (last)
                        break;
        }
}

void pending_calls_drop_all(BusService *s) {
        /* From the first anew each time: a job's drop may free a client and
         * with it entries of other jobs, which an iterator could hold. */
        MapIter it;
        for (MapNode *node; (node = map_first(&s->pending_jobs, &it));)
                pending_calls_drop(s, MAP_ITEM(node, PendingJob, node)->job);
        map_done(&s->pending_jobs);
}

void pending_calls_drop_client(BusClient *c) {
        while (c->pending)
                pending_call_drop(c->pending, false);
}

int pending_kill_session_add(BusService *s, Job *const *jobs, size_t n, sd_bus_message *call, sd_bus_error *error) {
        BusClient *c;
        int r = caller_client(s, call, &c, error);
        if (r < 0)
                return r;
        if (n == 0) {
                r = sd_bus_reply_method_return(call, "a{sv}", 2, "killed", "u", 0, "dead", "b", 1);
                bus_client_release(c);
                return r;
        }

        SessionKill *k = calloc(1, sizeof(SessionKill));
        if (!k) {
                bus_client_release(c);
                return -ENOMEM;
        }
        *k = (SessionKill) { .call = sd_bus_message_ref(call), .refs = 1, .dead = true };
        bus_client_count_pending(c, +1);
        for (size_t i = 0; i < n; i++) {
                PendingJob *e = pending_job_get(s, jobs[i]);
                PendingCall *p = e ? calloc(1, sizeof(PendingCall)) : NULL;
                if (!p) {
                        if (e && !e->calls.head)
                                pending_job_free(s, e);
                        break; /* those held so far answer; this one is not waited for */
                }
                *p = (PendingCall) { .job = jobs[i], .client = c, .kind = PENDING_KILL_SESSION, .session_kill = k };
                k->refs++;
                pending_call_link(p, e);
        }
        /* The reference held while the calls were being made. */
        session_kill_unref(k, c);
        return 1;
}

void pending_kill_session_job_ended(BusService *s, Job *j) {
        PendingJob *e = pending_job_find(s, j);
        for (PendingCall *p = e ? e->calls.head : NULL, *next; p; p = next) {
                next = p->job_next;
                if (p->kind != PENDING_KILL_SESSION)
                        continue;
                SessionKill *k = p->session_kill;
                /* A job discarded before it started ran nothing: neither
                 * killed nor alive. */
                if (job_is_ended(j) || job_teardown_known(j)) {
                        k->killed += j->status == JOB_KILLED;
                        JobView v;
                        k->dead = k->dead && job_view(j, &v) >= 0 && v.teardown.dead;
                }
                pending_call_free(p);
        }
}
