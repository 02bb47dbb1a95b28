/* SPDX-License-Identifier: MIT */
#pragma once

/* The job record on the bus. One table of appenders, indexed by the shared
 * record keys (src/shared/record-keys.h), serves Get, Wait and the job
 * object's properties, so none of them can drift from what bgrun reads. */

#include <systemd/sd-bus.h>

#include "job.h"
#include "record-keys.h"

typedef int (*RecordAppend)(sd_bus_message *m, const JobView *v);
extern const RecordAppend record_appenders[_RECORD_KEY_MAX];

/* Whether key k has no value in v (a figure not measured): left out of
 * records, UINT64_MAX as a property. */
bool bus_record_key_absent(RecordKey k, const JobView *v);

/* Append the whole record as a{sv}. */
int bus_append_record(sd_bus_message *m, const JobView *v);

/* Answer call with j's record (a{sv}), or with the error that kept it from
 * being read. */
int bus_reply_record(Job *j, sd_bus_message *call);

/* Answer a Kill call: killed and the teardown part of the record. */
int bus_reply_kill(Job *j, sd_bus_message *call, bool killed);
