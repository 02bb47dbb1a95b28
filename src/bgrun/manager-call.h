/* SPDX-License-Identifier: MIT */
#pragma once

/* The calls on bgrund's Manager: built, sent, and their answers read. A
 * failure is logged by call-error.c's log_call_error(), unless a function
 * says it leaves that to its caller. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#define USEC_INFINITY UINT64_MAX

/* How long bgrun waits for bgrund's answer: chosen by call_timeout() only,
 * from the deadline of deadline.h. A call given longer than the deadline
 * (it waits in bgrund) pings bgrund while it waits, so that a bgrund that
 * stopped answering is noticed within the deadline all the same. */
typedef enum CallTimeout {
        CALL_TIMEOUT_DEFAULT,   /* any call that bgrund answers at once: the deadline */
        CALL_TIMEOUT_TEARDOWN,  /* Kill, KillSession, Reap: the deadline and the teardown's wait */
        CALL_TIMEOUT_STOP,      /* Stop with the job's own grace (at most 10 min): the deadline, that and the teardown's */
} CallTimeout;

uint64_t call_timeout(CallTimeout kind);
/* Stop with a grace given: the deadline, the grace and the teardown's wait. */
uint64_t call_timeout_stop(uint64_t grace);
/* A call that waits up to wait in bgrund (Wait): that, and the deadline for
 * the answer to come. */
uint64_t call_timeout_after_wait(uint64_t wait);

/* A new call of method on bgrund's Manager, with the arguments types says
 * (as sd_bus_message_append()), or none with types NULL. */
int manager_new_call(sd_bus *bus, const char *method, sd_bus_message **ret, const char *types, ...);

/* A call sent whose answer is read later: calls sent one after another go
 * out together, one round trip for all. It must stay where it is (the
 * answer is stored in it) until pending_call_done(). */
typedef struct PendingCall {
        sd_bus_slot *slot;
        sd_bus_message *reply;
        uint64_t timeout;        /* past the deadline: bgrund is pinged while it waits */
} PendingCall;

/* Sends m without waiting; logs a failure to send. */
int manager_call_send(sd_bus *bus, sd_bus_message *m, uint64_t timeout, PendingCall *ret);
/* Waits for c's answer. On a failed call returns the negative error with
 * *error set, unlogged (log_call_error() says it). While bgrund is being
 * started, says at once if it cannot start (and returns -ENOTCONN). A call
 * of a timeout past the deadline pings bgrund as it waits: a ping
 * unanswered fails it with -ETIMEDOUT and SD_BUS_ERROR_NO_REPLY. */
int pending_call_reply(sd_bus *bus, PendingCall *c, sd_bus_error *error, sd_bus_message **ret_reply);
void pending_call_done(PendingCall *c);

/* manager_call_send() and pending_call_reply() in one: a call whose failure
 * the caller tells itself. */
int manager_call_raw(sd_bus *bus, sd_bus_message *m, uint64_t timeout, sd_bus_error *error,
                     sd_bus_message **ret_reply);

/* Calls m; on failure logs one line (about job id, if not NULL) and returns
 * the negative error. */
int manager_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id,
                 sd_bus_message **ret_reply);

/* Calls m like manager_call() and reads its a{sv} reply into a JSON object
 * (see record.h). */
int call_dict(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id, json_object **ret);

/* Sends a method call with one job id (and maybe a timeout) and reads its
 * a{sv} reply. */
int call_id_dict(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                 uint64_t timeout, json_object **ret);

int get_record(sd_bus *bus, const char *id, json_object **ret);
/* One Wait call; the daemon may answer before the job ended or timeout passed. */
int wait_record(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret);

/* What pending_call_dict() makes of an answer without the record. */
typedef enum PendingMissing {
        PENDING_MISSING_FAILS,             /* any error fails the call */
        PENDING_MISSING_OK,                /* a job not there (any more): no record, 0 */
        PENDING_MISSING_OR_UNREADABLE_OK,  /* that, or bgrund's error reading it: no record, a warning, 0 */
} PendingMissing;

/* A pending call's a{sv} answer as a JSON object; a failure logged (about
 * job id, if not NULL), but for the answers missing lets pass *ret is NULL
 * and 0. A call that nobody answered always fails. */
int pending_call_dict(sd_bus *bus, PendingCall *c, const char *method, const char *id, PendingMissing missing,
                      json_object **ret);

/* wait_record() in two halves, so that the Wait travels with other calls. */
int wait_record_send(sd_bus *bus, const char *id, uint64_t timeout, PendingCall *ret);
int wait_record_finish(sd_bus *bus, PendingCall *c, const char *id, json_object **ret);

/* Like wait_record(), but keeps waiting if the daemon returns early (it may
 * cap how long one Wait call blocks) until the job ended or timeout passed. */
int wait_until_ended(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret);
