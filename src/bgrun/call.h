/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's side of the bus: the connection to bgrund and the calls on its
 * Manager. Every function logs its own failure (one line) and returns the
 * negative error. */

#include <json-c/json.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#define USEC_INFINITY UINT64_MAX

/* $BGRUN_BUS_ADDRESS if set, else the system bus. */
int bus_connect(sd_bus **ret);

/* A new call of method on bgrund's Manager. */
int manager_new_call(sd_bus *bus, const char *method, sd_bus_message **ret);

/* Calls m; on failure logs one line (about job id, if not NULL) and returns
 * the negative error. timeout 0 is sd-bus' default, USEC_INFINITY none. */
int manager_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id,
                 sd_bus_message **ret_reply);

/* One line for a failed method call. id may be NULL if the call is not about
 * one job. Returns r (negative). */
int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r);
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

/* Like wait_record(), but keeps waiting if the daemon returns early (it may
 * cap how long one Wait call blocks) until the job ended or timeout passed. */
int wait_until_ended(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret);
