/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's side of the bus: the connection to bgrund and the calls on its
 * Manager. Every function logs its own failure (one line) and returns the
 * negative error. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#define USEC_INFINITY UINT64_MAX

/* Where bgrund is reached: --system (the default), --user, -H HOST or
 * --address ADDRESS. */
typedef enum BusTransport {
        BUS_TRANSPORT_SYSTEM,
        BUS_TRANSPORT_USER,
} BusTransport;

typedef struct BusTarget {
        BusTransport transport;
        bool transport_given;   /* --user or --system on the command line */
        const char *host;       /* -H [USER@]HOST: the system bus there, through ssh */
        const char *address;    /* --address: any D-Bus address, a bus or bgrund --listen */
} BusTarget;

/* The default sockets of bgrund --listen, used where there is no bus. */
#define BGRUN_LISTEN_ADDRESS_SYSTEM "unix:path=/run/bgrun/bus"
#define BGRUN_LISTEN_SOCKET_USER "bgrun/bus" /* below $XDG_RUNTIME_DIR */

/* Connects to bgrund as target says; with neither -H nor --address,
 * $BGRUN_ADDRESS (or the older $BGRUN_BUS_ADDRESS) unless --user/--system
 * was given; with no bus at all, the default socket of bgrund --listen. */
int bus_connect(const BusTarget *target, sd_bus **ret);

/* The uid bgrund takes this connection's calls to come from. */
int bus_caller_uid(sd_bus *bus, uid_t *ret);

/* The target connected to: -H sends nothing of the local environment. */
bool bus_target_is_remote(const BusTarget *target);

/* A new call of method on bgrund's Manager, with the arguments types says
 * (as sd_bus_message_append()), or none with types NULL. */
int manager_new_call(sd_bus *bus, const char *method, sd_bus_message **ret, const char *types, ...);

/* A call sent whose answer is read later: calls sent one after another go
 * out together, one round trip for all. It must stay where it is (the
 * answer is stored in it) until pending_call_done(). */
typedef struct PendingCall {
        sd_bus_slot *slot;
        sd_bus_message *reply;
} PendingCall;

/* Sends m without waiting; logs a failure to send. */
int manager_call_send(sd_bus *bus, sd_bus_message *m, uint64_t timeout, PendingCall *ret);
/* Waits for c's answer. On a failed call returns the negative error with
 * *error set, unlogged (log_call_error() says it). While bgrund is being
 * started, says at once if it cannot start (and returns -ENOTCONN). */
int pending_call_reply(sd_bus *bus, PendingCall *c, sd_bus_error *error, sd_bus_message **ret_reply);
void pending_call_done(PendingCall *c);

/* manager_call_send() and pending_call_reply() in one: a call whose failure
 * the caller tells itself. */
int manager_call_raw(sd_bus *bus, sd_bus_message *m, uint64_t timeout, sd_bus_error *error,
                     sd_bus_message **ret_reply);

/* Calls m; on failure logs one line (about job id, if not NULL) and returns
 * the negative error. timeout 0 is sd-bus' default, USEC_INFINITY none. */
int manager_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id,
                 sd_bus_message **ret_reply);

/* One line for a failed method call (none if why bgrund cannot start was
 * said already). id may be NULL if the call is not about one job. Returns r
 * (negative). */
int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r);

/* The reason of an access-denied error's message, without the "Request
 * authority denied: " or "Access denied: " it may begin with (a pointer into
 * message), so that "Access denied: " is not said twice. */
const char *access_denied_reason(const char *message);
int log_parse_error(const char *method, int r);

/* Calls m like manager_call() and reads its a{sv} reply into a JSON object
 * (see record.h). */
int call_dict(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id, json_object **ret);

/* Sends a method call with one job id (and maybe a timeout) and reads its
 * a{sv} reply. */
int call_id_dict(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                 uint64_t call_timeout, json_object **ret);

int get_record(sd_bus *bus, const char *id, json_object **ret);
/* One Wait call; the daemon may answer before the job ended or timeout passed. */
int wait_record(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret);

/* wait_record() in two halves, so that the Wait travels with other calls. */
int wait_record_send(sd_bus *bus, const char *id, uint64_t timeout, PendingCall *ret);
int wait_record_finish(sd_bus *bus, PendingCall *c, const char *id, json_object **ret);

/* Like wait_record(), but keeps waiting if the daemon returns early (it may
 * cap how long one Wait call blocks) until the job ended or timeout passed. */
int wait_until_ended(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret);
