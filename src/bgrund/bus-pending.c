/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bus-client.h"
#include "bus-pending.h"
#include "bus-record.h"
#include "bus-service.h"
#include "list.h"
#include "runtime.h"

struct PendingCall {
        PendingCall *next, *prev;               /* its job's */
        PendingCall *client_next, *client_prev; /* its connection's */
        Job *job;
        BusClient *client;
        PendingKind kind;
        sd_bus_message *call;
        sd_event_source *timer;
};

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

static int on_wait_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        PendingCall *p = userdata;
        /* Not ended yet: Wait answers with the record as it is. */
        (void) bus_reply_record(p->job, p->call);
        pending_call_free(p);
        return 0;
}

int pending_call_add(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec,
                     sd_bus_error *error) {
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
        *p = (PendingCall) { .job = j, .client = c, .kind = kind, .call = sd_bus_message_ref(call) };
        LIST_PREPEND(j->pending, p);
        p->client_next = c->pending;
        if (c->pending)
                c->pending->client_prev = p;
        c->pending = p;
        bus_client_count_pending(c, +1);
        /* Anything past a century is forever (and would overflow the clock). */
        if (kind == PENDING_WAIT && timeout_usec < 100ULL * 365 * 24 * 3600 * USEC_PER_SEC) {
                r = sd_event_add_time_relative(s->runtime->event, &p->timer, CLOCK_MONOTONIC, timeout_usec, 0,
                                               on_wait_timeout, p);
                if (r < 0) {
                        pending_call_free(p);
                        return r;
                }
        }
        return 0;
}

void pending_calls_answer(Job *j, PendingKind kind, PendingAnswer answer, void *userdata) {
        for (PendingCall *p = j->pending, *next; p; p = next) {
                next = p->next;
                if (p->kind != kind)
                        continue;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = TAKE_PTR(p->call);
                pending_call_free(p);
                answer(j, call, userdata);
        }
}

void pending_calls_drop(Job *j) {
        while (j->pending)
                pending_call_free(j->pending);
}

void pending_calls_drop_client(BusClient *c) {
        while (c->pending)
                pending_call_free_full(c->pending, false);
}
