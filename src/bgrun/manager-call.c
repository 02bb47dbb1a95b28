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
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "manager-call.h"
#include "record.h"
#include "time-util.h"

/* Margin on top of a server-side wait, so the reply has time to arrive. */
#define CALL_MARGIN_USEC (25 * USEC_PER_SEC)

/* Kill returns only once the teardown is confirmed; give it time. */
#define TEARDOWN_CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)
/* Stop waits the grace first (at most 10 min). */
#define STOP_CALL_TIMEOUT_USEC ((600 + 120) * USEC_PER_SEC)

uint64_t call_timeout(CallTimeout kind) {
        switch (kind) {
        case CALL_TIMEOUT_TEARDOWN:
                return TEARDOWN_CALL_TIMEOUT_USEC;
        case CALL_TIMEOUT_STOP:
                return STOP_CALL_TIMEOUT_USEC;
        case CALL_TIMEOUT_DEFAULT:
        default:
                return 0; /* sd-bus' default */
        }
}

uint64_t call_timeout_after_wait(uint64_t timeout) {
        if (timeout == USEC_INFINITY || timeout > USEC_INFINITY - CALL_MARGIN_USEC - 1)
                return USEC_INFINITY;
        return timeout + CALL_MARGIN_USEC;
}

static int on_call_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        PendingCall *c = userdata;

        daemon_check_answered(sd_bus_message_get_error(m));
        c->reply = sd_bus_message_ref(m);
        return 0;
}

int manager_call_send(sd_bus *bus, sd_bus_message *m, uint64_t timeout, PendingCall *ret) {
        int r;

        *ret = (PendingCall) {};
        r = sd_bus_call_async(bus, &ret->slot, m, on_call_reply, ret, timeout);
        if (r < 0)
                return log_error_errno(r, "Failed to send %s call: %m", sd_bus_message_get_member(m));
        return 0;
}

void pending_call_done(PendingCall *c) {
        c->slot = sd_bus_slot_unref(c->slot);
        c->reply = sd_bus_message_unref(c->reply);
}

int pending_call_reply(sd_bus *bus, PendingCall *c, sd_bus_error *error, sd_bus_message **ret_reply) {
        int r;

        while (!c->reply) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;

                if (daemon_check_waiting()) {
                        r = daemon_check_step(bus);
                        if (r < 0)
                                return r;
                }

                r = sd_bus_wait(bus, daemon_check_waiting() ? 100 * USEC_PER_MSEC : UINT64_MAX);
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
        _cleanup_(pending_call_done) PendingCall c = {};
        int r;

        r = sd_bus_call_async(bus, &c.slot, m, on_call_reply, &c, timeout);
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

int wait_record_finish(sd_bus *bus, PendingCall *c, const char *id, json_object **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = pending_call_reply(bus, c, &error, &reply);
        if (r < 0)
                return log_call_error("Wait", id, &error, r);
        r = read_dict(reply, ret);
        if (r < 0)
                return log_parse_error("Wait", r);
        return 0;
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
