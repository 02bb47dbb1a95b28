/* SPDX-License-Identifier: MIT */
#include "bus-pending.h"
#include "bus-record.h"
#include "bus-service.h"
#include "list.h"
#include "runtime.h"

struct PendingCall {
        PendingCall *next, *prev;
        Job *job;
        PendingKind kind;
        sd_bus_message *call;
        sd_event_source *timer;
};

static void pending_call_free(PendingCall *p) {
        LIST_REMOVE(p->job->pending, p);
        sd_event_source_disable_unref(p->timer);
        sd_bus_message_unref(p->call);
        free(p);
}

static int on_wait_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        PendingCall *p = userdata;
        /* Not ended yet: Wait answers with the record as it is. */
        (void) bus_reply_record(p->job, p->call);
        pending_call_free(p);
        return 0;
}

int pending_call_add(BusService *s, Job *j, PendingKind kind, sd_bus_message *call, uint64_t timeout_usec) {
        PendingCall *p = calloc(1, sizeof(PendingCall));
        if (!p)
                return -ENOMEM;
        *p = (PendingCall) { .job = j, .kind = kind, .call = sd_bus_message_ref(call) };
        LIST_PREPEND(j->pending, p);
        /* Anything past a century is forever (and would overflow the clock). */
        if (kind == PENDING_WAIT && timeout_usec < 100ULL * 365 * 24 * 3600 * USEC_PER_SEC) {
                int r = sd_event_add_time_relative(s->runtime->event, &p->timer, CLOCK_MONOTONIC, timeout_usec, 0,
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
