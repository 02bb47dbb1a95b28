/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bus-client.h"
#include "bus-pending.h"
#include "bus-record.h"
#include "bus-service.h"
#include "list.h"
#include "runtime.h"

/* A KillSession call, shared by one PendingCall on each of its jobs. */
typedef struct SessionKill {
        sd_bus_message *call;
        unsigned refs;      /* its jobs not ended yet */
        unsigned killed;
        bool dead;          /* every ended one confirmed dead */
} SessionKill;

struct PendingCall {
        PendingCall *next, *prev;               /* its job's */
        PendingCall *client_next, *client_prev; /* its connection's */
        Job *job;
        BusClient *client;
        PendingKind kind;
        sd_bus_message *call;                   /* NULL for PENDING_KILL_SESSION */
        SessionKill *session_kill;              /* PENDING_KILL_SESSION */
        sd_event_source *timer;
        PendingAnswer timeout;                  /* answers call when timer fires */
};

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
        LIST_REMOVE(p->job->pending, p);
        BusClient *c = p->client;
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

bool pending_calls_any(const Job *j, PendingKind kind) {
        for (const PendingCall *p = j->pending; p; p = p->next)
                if (p->kind == kind)
                        return true;
        return false;
}

int pending_call_add_full(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec,
                          PendingAnswer timeout, sd_bus_error *error) {
        uid_t uid;
        BusClient *c;
        int r = bus_caller_uid(call, &uid, error);
        if (r >= 0)
                r = bus_client_get(s, call, uid, &c);
        if (r < 0)
                return r;
        r = bus_client_may_wait(c, error);
        if (r < 0) {
                bus_client_release(c);
                return r;
        }
        PendingCall *p = calloc(1, sizeof(PendingCall));
        if (!p) {
                bus_client_release(c);
                return -ENOMEM;
        }
        *p = (PendingCall) { .job = j, .client = c, .kind = kind, .call = sd_bus_message_ref(call), .timeout = timeout };
        LIST_PREPEND(j->pending, p);
        p->client_next = c->pending;
        if (c->pending)
                c->pending->client_prev = p;
        c->pending = p;
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

void pending_calls_answer(Job *j, PendingKind kind, PendingAnswer answer, void *userdata) {
        /* The list is newest first. */
        PendingCall *last = j->pending;
        while (last && last->next)
                last = last->next;
        for (PendingCall *p = last, *prev; p; p = prev) {
                prev = p->prev;
                if (p->kind != kind)
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

void pending_calls_drop(Job *j) {
        while (j->pending)
                pending_call_drop(j->pending, true);
}

void pending_calls_drop_client(BusClient *c) {
        while (c->pending)
                pending_call_drop(c->pending, false);
}

int pending_kill_session_add(BusService *s, Job *const *jobs, size_t n, sd_bus_message *call, sd_bus_error *error) {
        uid_t uid;
        BusClient *c;
        int r = bus_caller_uid(call, &uid, error);
        if (r >= 0)
                r = bus_client_get(s, call, uid, &c);
        if (r < 0)
                return r;
        r = bus_client_may_wait(c, error);
        if (r >= 0 && n == 0)
                r = sd_bus_reply_method_return(call, "a{sv}", 2, "killed", "u", 0, "dead", "b", 1);
        if (r < 0 || n == 0) {
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
                PendingCall *p = calloc(1, sizeof(PendingCall));
                if (!p)
                        break; /* those held so far answer; this one is not waited for */
                *p = (PendingCall) { .job = jobs[i], .client = c, .kind = PENDING_KILL_SESSION, .session_kill = k };
                k->refs++;
                LIST_PREPEND(jobs[i]->pending, p);
                p->client_next = c->pending;
                if (c->pending)
                        c->pending->client_prev = p;
                c->pending = p;
        }
        /* The reference held while the calls were being made. */
        session_kill_unref(k, c);
        return 1;
}

void pending_kill_session_job_ended(Job *j) {
        for (PendingCall *p = j->pending, *next; p; p = next) {
                next = p->next;
                if (p->kind != PENDING_KILL_SESSION)
                        continue;
                SessionKill *k = p->session_kill;
                /* A job discarded before it started ran nothing: neither
                 * killed nor alive. */
                if (j->phase == JOB_PHASE_ENDED) {
                        k->killed += j->status == JOB_KILLED;
                        JobView v;
                        k->dead = k->dead && job_view(j, &v) >= 0 && v.result && v.result->dead;
                }
                pending_call_free(p);
        }
}
