/* SPDX-License-Identifier: MIT */
/* The waits of bgrun mcp hold no call to bgrund: the server subscribes once
 * and follows bgrund's JobRemoved, which comes when a job's record is
 * final. A waiting tool call keeps a timer (its deadline; more often for
 * progress) and asks for the
 * record only when something may have changed: at its start, at that
 * timer, and at its job's JobRemoved. In output mode (the output tool's
 * wait_sec) it holds one WaitOutput instead, which bgrund answers when the
 * output grows (polling the record only when 32 are in flight already, or
 * bgrund is one without WaitOutput). So a thousand waits cost bgrund
 * nothing while they wait, and hold none of the room the bus daemon gives
 * this connection for calls in flight.
 *
 * The signal is believed only from the connection that owns bgrund's name
 * now (bus-sender.h: anyone may send this connection a JobRemoved of their
 * own). A bgrund restarted under a new name has forgotten the
 * subscription: it is asked again, and every wait looks at its record.
 * Where the server is not subscribed, a wait is a chain of Wait calls of a
 * slice each (mcp_call_wait()). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "bus-json.h"
#include "bus-sender.h"
#include "list.h"
#include "log.h"
#include "manager-call.h"
#include "mcp-call.h"
#include "mcp-progress.h"
#include "record.h"
#include "time-util.h"

/* How often a wait looks at its record while the server is not subscribed. */
#define UNSUBSCRIBED_POLL_USEC (1 * USEC_PER_SEC)

struct McpWatch {
        McpServer *server;
        BusNameOwner bgrund;   /* whose JobRemoved is bgrund's */
        sd_bus_slot *match;    /* JobRemoved */
        sd_bus_slot *subscribe;
        bool subscribed;
};

static int look_again(McpCall *c);

static void recheck_all(McpServer *s, const char *id) {
        McpCall *next;
        for (McpCall *c = s->waiters; c; c = next) {
                next = c->waiter_next; /* look_again may answer c */
                if (!id || (c->job_id && streq(c->job_id, id)))
                        (void) look_again(c);
        }
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        McpWatch *w = userdata;
        const char *id, *path, *status;
        if (!bus_name_owner_sent(&w->bgrund, m)) {
                log_debug("Ignoring a JobRemoved from %s, which is not bgrund",
                          sd_bus_message_get_sender(m) ?: "(no sender)");
                return 0;
        }
        if (sd_bus_message_read(m, "sos", &id, &path, &status) >= 0)
                recheck_all(w->server, id);
        return 0;
}

static int on_subscribed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        McpWatch *w = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        w->subscribe = sd_bus_slot_unref(w->subscribe);
        w->subscribed = !e;
        if (e) {
                log_debug("Cannot subscribe to bgrund's signals (%s): waits wait in Wait calls",
                          e->message ?: e->name);
                return 0;
        }
        /* An end may have come before: each wait looks once more. */
        recheck_all(w->server, NULL);
        return 0;
}

static void subscribe(McpWatch *w) {
        McpServer *s = w->server;
        w->subscribed = false;
        w->subscribe = sd_bus_slot_unref(w->subscribe);
        int r = sd_bus_call_method_async(s->bus, &w->subscribe, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH,
                                         BGRUN_MANAGER_INTERFACE, "Subscribe", on_subscribed, w, "");
        if (r < 0)
                log_debug_errno(r, "Cannot subscribe to bgrund's signals: %m");
}

static void on_bgrund_changed(void *userdata) {
        McpWatch *w = userdata;
        /* Gone: nothing is subscribed. Back under a new name: again. */
        w->subscribed = false;
        if (w->bgrund.owner)
                subscribe(w);
}

int mcp_watch_start(McpServer *s) {
        McpWatch *w = calloc(1, sizeof *w);
        if (!w)
                return -ENOMEM;
        w->server = s;
        s->watch = w;
        int r = bus_name_owner_watch_full(&w->bgrund, s->bus, BGRUN_BUS_NAME, on_bgrund_changed, w);
        if (r >= 0)
                r = sd_bus_match_signal_async(s->bus, &w->match, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH,
                                              BGRUN_MANAGER_INTERFACE, "JobRemoved", on_job_removed, NULL, w);
        if (r < 0)
                return r;
        subscribe(w);
        return 0;
}

void mcp_watch_free(McpServer *s) {
        McpWatch *w = s->watch;
        if (!w)
                return;
        bus_name_owner_done(&w->bgrund);
        sd_bus_slot_unref(w->match);
        sd_bus_slot_unref(w->subscribe);
        free(w);
        s->watch = NULL;
}

static int on_wait_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        McpCall *c = userdata;
        c->wait_timer = sd_event_source_disable_unref(c->wait_timer);
        return look_again(c);
}

/* A waiting read's WaitOutput answered: output came, the job ended, or
 * its timeout (the next look) passed; the record says which. */
static int on_output_waited(McpCall *c, sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        /* A bgrund one release older: waiting reads poll from now on. */
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_UNKNOWN_METHOD))
                c->server->no_wait_output = true;
        return look_again(c);
}

/* In output mode, one WaitOutput instead of polling the record for the
 * output's growth: bgrund answers when it comes. Not when the output lane
 * is full (at most MCP_LANE_OUTPUT_MAX at a time) or bgrund has none. */
static int wait_for_output(McpCall *c, uint64_t at) {
        McpServer *s = c->server;
        if (!c->output_mode || s->no_wait_output || !mcp_lane_has_room(s, MCP_LANE_OUTPUT))
                return 0;
        uint64_t now = now_monotonic_usec();
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = mcp_new_call(c, "WaitOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "stut", c->job_id, c->offset, 0, at > now ? at - now : 1);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the WaitOutput call: %s", strerror(-r));
        c->step_takes_errors = true;
        r = mcp_call_bus_lane(c, TAKE_PTR(m), (at > now ? at - now : 0) + s->call_timeout_usec, on_output_waited,
                              MCP_LANE_OUTPUT);
        return r < 0 ? r : 1;
}

/* The next time c looks without being told: its deadline, or sooner.
 * < 0 only when no timer could be armed (c is not answered then). */
static int arm(McpCall *c) {
        uint64_t now = now_monotonic_usec(), at = c->deadline;
        if (c->progress_token)
                at = MIN(at, now + PROGRESS_INTERVAL_USEC);
        /* The subscription lost (bgrund restarting, or refusing it): no end
         * is told meanwhile, so look now and then. */
        if (!c->server->watch || !c->server->watch->subscribed)
                at = MIN(at, now + UNSUBSCRIBED_POLL_USEC);
        c->wait_timer = sd_event_source_disable_unref(c->wait_timer);
        /* < 0: c was answered with the failure already, and is gone. */
        int r = wait_for_output(c, at);
        if (r != 0)
                return 0;
        if (c->output_mode)
                at = MIN(at, now + OUTPUT_POLL_USEC);
        return sd_event_add_time(c->server->event, &c->wait_timer, CLOCK_MONOTONIC, at, USEC_PER_MSEC, on_wait_timer,
                                 c);
}

static int after_record(McpCall *c, sd_bus_message *unused) {
        int r;
        if (mcp_wait_over(c)) {
                mcp_wait_forget(c);
                (void) mcp_call_set_waiting(c, false);
                return c->after_wait(c, NULL);
        }
        if (c->recheck)
                return look_again(c);
        r = arm(c);
        return r < 0 ? mcp_call_fail(c, "Cannot wait: %s", strerror(-r)) : 0;
}

static int on_record(McpCall *c, sd_bus_message *reply) {
        int r = mcp_call_take_record(c, reply);
        if (r < 0)
                return r; /* answered with the error */
        return mcp_progress(c, after_record);
}

/* One Get, unless one is in flight already: then once more after it. */
static int look_again(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        if (c->slot || c->queued) {
                c->recheck = true;
                return 0;
        }
        c->recheck = false;
        int r = mcp_new_call(c, "Get", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", c->job_id);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the Get call: %s", strerror(-r));
        return mcp_call_bus(c, TAKE_PTR(m), 0, on_record);
}

int mcp_wait_follow(McpCall *c) {
        McpServer *s = c->server;
        /* A waiting read needs no subscription: its WaitOutput answers at
         * the job's end too (and arm() looks at the record now and then
         * while there is none). */
        bool subscribed = s->watch && s->watch->subscribed;
        if (!c->job_id || (!subscribed && !c->output_mode))
                return -EAGAIN;
        c->following = true;
        LIST_PREPEND_F(waiter, s->waiters, c);
        /* Registered first: an end from now on is seen, then the record. */
        return look_again(c);
}

static int wait_slice(McpCall *c);

bool mcp_wait_over(McpCall *c) {
        uint64_t bytes = 0, place = 0;
        if (!record_is_running(c->record) || now_monotonic_usec() >= c->deadline)
                return true;
        /* A run that asked for the queue and got it is answered at once. */
        if (c->args.queue && dict_get_uint(c->record, &record_keys[RECORD_KEY_QUEUE_POSITION], &place) && place > 0)
                return true;
        return c->output_mode && dict_get_uint(c->record, &record_keys[RECORD_KEY_OUTPUT_BYTES], &bytes) &&
               bytes > c->offset;
}

static int after_wait_reply(McpCall *c, sd_bus_message *unused) {
        if (mcp_wait_over(c)) {
                (void) mcp_call_set_waiting(c, false);
                return c->after_wait(c, NULL);
        }
        return wait_slice(c);
}

static int on_wait_reply(McpCall *c, sd_bus_message *reply) {
        int r = mcp_call_take_record(c, reply);
        if (r < 0)
                return r;
        return mcp_progress(c, after_wait_reply);
}

static int wait_slice(McpCall *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint64_t now = now_monotonic_usec(), slice = c->deadline > now ? c->deadline - now : 0;
        int r;

        if (c->output_mode)
                slice = MIN(slice, OUTPUT_POLL_USEC);
        if (c->progress_token)
                slice = MIN(slice, PROGRESS_INTERVAL_USEC);
        /* No Wait longer than the deadline: a bgrund that stopped answering
         * is noticed within twice the deadline, however long the wait. */
        slice = MIN(slice, c->server->call_timeout_usec);
        r = mcp_new_call(c, "Wait", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "st", c->job_id, slice);
        if (r < 0)
                return mcp_call_fail(c, "Failed to build the Wait call: %s", strerror(-r));
        return mcp_call_bus(c, TAKE_PTR(m), call_timeout_after_wait(slice), on_wait_reply);
}

int mcp_call_wait(McpCall *c, McpStep next) {
        c->after_wait = next;
        int r = mcp_call_set_waiting(c, true);
        if (r < 0)
                return r; /* refused, and answered */
        if (mcp_wait_follow(c) != -EAGAIN)
                return 0;
        /* At least one Wait, of 0 if need be: it brings the record. The
         * Waits go in the wait lane: they never take a kill's room. */
        return wait_slice(c);
}
