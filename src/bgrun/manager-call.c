/* SPDX-License-Identifier: MIT */
/* The calls on bgrund's Manager: built, sent together where they can be,
 * and their answers read. */

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "bgrun/bus-api.h"
#include "bus-json.h"
#include "call-error.h"
#include "daemon-check.h"
#include "deadline.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "manager-call.h"
#include "reach.h"
#include "record.h"
#include "time-util.h"

/* Kill answers once the teardown is confirmed: the supervisor waits up to
 * 10 s for the cgroup to empty (TEARDOWN_TIMEOUT_USEC). */
#define TEARDOWN_WAIT_USEC (10 * USEC_PER_SEC)
/* Stop without --grace waits the job's own grace first: at most 10 min. */
#define STOP_GRACE_MAX_USEC (600 * USEC_PER_SEC)

uint64_t call_timeout_after_wait(uint64_t timeout) {
        uint64_t margin = call_deadline_usec();

        if (timeout == USEC_INFINITY || timeout > USEC_INFINITY - margin - 1)
                return USEC_INFINITY;
        return timeout + margin;
}

uint64_t call_timeout_stop(uint64_t grace) {
        return call_timeout_after_wait(grace == USEC_INFINITY ? grace : grace + TEARDOWN_WAIT_USEC);
}

uint64_t call_timeout(CallTimeout kind) {
        switch (kind) {
        case CALL_TIMEOUT_TEARDOWN:
                return call_timeout_after_wait(TEARDOWN_WAIT_USEC);
        case CALL_TIMEOUT_STOP:
                return call_timeout_stop(STOP_GRACE_MAX_USEC);
        case CALL_TIMEOUT_DEFAULT:
        default:
                return call_deadline_usec();
        }
}

static int on_call_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        PendingCall *c = userdata;

        daemon_check_answered(sd_bus_message_get_error(m));
        c->reply = sd_bus_message_ref(m);
        return 0;
}

int manager_call_send(sd_bus *bus, sd_bus_message *m, uint64_t timeout, PendingCall *ret) {
        int r;

        *ret = (PendingCall) { .timeout = timeout ?: call_deadline_usec() };
        r = sd_bus_call_async(bus, &ret->slot, m, on_call_reply, ret, ret->timeout);
        if (r < 0)
                return log_error_errno(r, "Failed to send %s call: %m", sd_bus_message_get_member(m));
        return 0;
}

void pending_call_done(PendingCall *c) {
        c->slot = sd_bus_slot_unref(c->slot);
        c->reply = sd_bus_message_unref(c->reply);
}

/* The pings of a call that waits in bgrund: one at a time. */
typedef struct Ping {
        sd_bus_slot *slot;
        bool answered;
        bool unanswered;   /* timed out: bgrund does not answer */
        uint64_t next;     /* when the next one goes out */
} Ping;

static int on_ping_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Ping *p = userdata;

        /* Any answer, an error too, is a bgrund that answers. */
        if (sd_bus_message_is_method_error(m, SD_BUS_ERROR_NO_REPLY))
                p->unanswered = true;
        else
                p->answered = true;
        return 0;
}

static void ping_done(Ping *p) {
        p->slot = sd_bus_slot_unref(p->slot);
}

/* Sends the next ping when its time has come; returns how long the wait
 * for the bus may last until then. */
static int ping_step(sd_bus *bus, Ping *p, uint64_t *ret_wait) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        uint64_t now = now_monotonic_usec();
        int r;

        if (p->answered) {
                ping_done(p);
                p->answered = false;
                p->next = now + call_ping_interval_usec();
        }
        *ret_wait = UINT64_MAX; /* the ping's own timeout wakes the wait */
        if (p->slot)
                return 0;
        if (now < p->next) {
                *ret_wait = p->next - now;
                return 0;
        }
        r = sd_bus_message_new_method_call(bus, &m, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH, "org.freedesktop.DBus.Peer",
                                           "Ping");
        if (r < 0)
                return r;
        return sd_bus_call_async(bus, &p->slot, m, on_ping_reply, p, call_ping_timeout_usec());
}

int pending_call_reply(sd_bus *bus, PendingCall *c, sd_bus_error *error, sd_bus_message **ret_reply) {
        uint64_t start = now_monotonic_usec();
        _cleanup_(ping_done) Ping ping = { .next = start + call_ping_interval_usec() };
        bool pinging = c->timeout > call_deadline_usec();
        /* sd-bus heeds no call's timeout while it authenticates (a stopped
         * bgrund --listen): the deadline is kept here too. */
        uint64_t end = c->timeout == USEC_INFINITY || c->timeout > USEC_INFINITY - start ? USEC_INFINITY
                                                                                          : start + c->timeout;
        int r;

        while (!c->reply) {
                uint64_t wait = UINT64_MAX, now;

                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                /* A call timed out is dispatched with 0 returned: look again. */
                if (r > 0 || c->reply)
                        continue;

                if (ping.unanswered)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_NO_REPLY,
                                                 "bgrund did not answer a ping within the call's deadline");
                if (pinging) {
                        r = ping_step(bus, &ping, &wait);
                        if (r < 0)
                                return r;
                }
                if (daemon_check_waiting()) {
                        r = daemon_check_step(bus);
                        if (r < 0)
                                return r;
                        wait = MIN(wait, 100 * USEC_PER_MSEC);
                }
                now = now_monotonic_usec();
                if (end != USEC_INFINITY) {
                        /* A little after sd-bus' own timeout, which says it when it can. */
                        uint64_t at = end + 50 * USEC_PER_MSEC;
                        if (now >= at)
                                return sd_bus_error_setf(error, SD_BUS_ERROR_NO_REPLY,
                                                         "bgrund did not answer within the call's deadline");
                        wait = MIN(wait, at - now);
                }

                r = sd_bus_wait(bus, wait);
                if (r < 0 && r != -EINTR)
                        return r;
        }

        if (sd_bus_message_is_method_error(c->reply, NULL)) {
                r = sd_bus_error_copy(error, sd_bus_message_get_error(c->reply));
                /* What sd-bus answers for every call when the connection
                 * closes: the connection went, not the time. */
                if (sd_bus_error_has_name(error, SD_BUS_ERROR_NO_REPLY) && sd_bus_is_open(bus) <= 0) {
                        sd_bus_error_free(error);
                        return -ECONNRESET;
                }
                return daemon_check_failed_call(error) ?: r;
        }

        if (ret_reply)
                *ret_reply = sd_bus_message_ref(c->reply);
        return 0;
}

int manager_new_call(sd_bus *bus, const char *method, sd_bus_message **ret, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE,
                                           method);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s call: %m", method);

        /* Let polkit ask for a password when a person is there to type it. */
        r = sd_bus_message_set_allow_interactive_authorization(m, isatty(STDIN_FILENO) > 0);
        if (r < 0)
                return log_error_errno(r, "Failed to set interactive authorization: %m");

        if (types) {
                va_list ap;
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return log_error_errno(r, "Failed to build %s call: %m", method);
        }
        *ret = TAKE_PTR(m);
        return 0;
}

int manager_call_raw(sd_bus *bus, sd_bus_message *m, uint64_t timeout, sd_bus_error *error,
                     sd_bus_message **ret_reply) {
        _cleanup_(pending_call_done) PendingCall c = { .timeout = timeout ?: call_deadline_usec() };
        int r;

        r = sd_bus_call_async(bus, &c.slot, m, on_call_reply, &c, c.timeout);
        if (r < 0)
                return r;
        return pending_call_reply(bus, &c, error, ret_reply);
}

int manager_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id,
                 sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = manager_call_raw(bus, m, timeout, &error, ret_reply);
        if (r < 0)
                return log_call_error(sd_bus_message_get_member(m), id, &error, r);
        return 0;
}

/* The reply's one a{sv}, as a JSON object. */
static int read_dict(sd_bus_message *reply, json_object **ret) {
        _cleanup_json_ json_object *dict = NULL;
        int r;

        if (!sd_bus_message_has_signature(reply, "a{sv}"))
                return -EBADMSG;

        r = bus_json_read(reply, &dict);
        if (r < 0)
                return r;
        if (r == 0 || !json_object_is_type(dict, json_type_object))
                return -EBADMSG;

        *ret = TAKE_PTR(dict);
        return 0;
}

int call_dict(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id, json_object **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = manager_call(bus, m, timeout, id, &reply);
        if (r < 0)
                return r;

        r = read_dict(reply, ret);
        if (r < 0)
                return log_parse_error(sd_bus_message_get_member(m), r);
        return 0;
}

static int new_id_call(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                       sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = wait_timeout ? manager_new_call(bus, method, &m, "st", id, *wait_timeout)
                         : manager_new_call(bus, method, &m, "s", id);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int call_id_dict(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                 uint64_t timeout, json_object **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_id_call(bus, method, id, wait_timeout, &m);
        if (r < 0)
                return r;
        return call_dict(bus, m, timeout, id, ret);
}

int get_record(sd_bus *bus, const char *id, json_object **ret) {
        return call_id_dict(bus, "Get", id, NULL, call_timeout(CALL_TIMEOUT_DEFAULT), ret);
}

/* The call's own timeout: the wait's, and time for the answer to come. */
int wait_record(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret) {
        return call_id_dict(bus, "Wait", id, &timeout, call_timeout_after_wait(timeout), ret);
}

int wait_record_send(sd_bus *bus, const char *id, uint64_t timeout, PendingCall *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_id_call(bus, "Wait", id, &timeout, &m);
        if (r < 0)
                return r;
        return manager_call_send(bus, m, call_timeout_after_wait(timeout), ret);
}

int pending_call_dict(sd_bus *bus, PendingCall *c, const char *method, const char *id, PendingMissing missing,
                      json_object **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        *ret = NULL;
        r = pending_call_reply(bus, c, &error, &reply);
        if (r < 0 && missing != PENDING_MISSING_FAILS && sd_bus_error_has_name(&error, BGRUN_ERROR_NO_SUCH_JOB))
                return 0;
        /* bgrund answered, and not with the record: one row without it,
         * not a listing that fails as a whole. */
        if (r < 0 && missing == PENDING_MISSING_OR_UNREADABLE_OK && sd_bus_error_is_set(&error) &&
            !errno_means_nobody_there(r) && !sd_bus_error_has_name(&error, SD_BUS_ERROR_NO_REPLY)) {
                log_warning("Job %s: its record cannot be read (%s); listed without it", id,
                            error.message ?: error.name);
                return 0;
        }
        if (r < 0)
                return log_call_error(method, id, &error, r);
        r = read_dict(reply, ret);
        if (r < 0)
                return log_parse_error(method, r);
        return 0;
}

int wait_record_finish(sd_bus *bus, PendingCall *c, const char *id, json_object **ret) {
        return pending_call_dict(bus, c, "Wait", id, PENDING_MISSING_FAILS, ret);
}

int wait_until_ended(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret) {
        uint64_t deadline = USEC_INFINITY, remaining = timeout;
        int r;

        if (timeout != USEC_INFINITY && timeout < USEC_INFINITY - now_monotonic_usec())
                deadline = now_monotonic_usec() + timeout;

        for (;;) {
                _cleanup_json_ json_object *rec = NULL;
                uint64_t now;

                r = wait_record(bus, id, remaining, &rec);
                if (r < 0)
                        return r;

                now = now_monotonic_usec();
                if (!record_is_running(rec) || (deadline != USEC_INFINITY && now >= deadline)) {
                        *ret = TAKE_PTR(rec);
                        return 0;
                }

                if (deadline != USEC_INFINITY)
                        remaining = deadline - now;
        }
}
