/* SPDX-License-Identifier: MIT */
#pragma once

/* The job record on the bus. One table of fields serves both Get/Wait (an
 * a{sv}) and the job object's properties, so the two never drift apart. */

#include <systemd/sd-bus.h>

#include "daemon.h"

typedef struct RecordField {
        const char *name;
        const char *signature;
        int (*append)(sd_bus_message *m, const JobView *v);
} RecordField;

#define RECORD_FIELDS_COUNT 16
extern const RecordField record_fields[RECORD_FIELDS_COUNT];

const RecordField *record_field_find(const char *name);

/* Append the whole record as a{sv}. */
int bus_append_record(sd_bus_message *m, const JobView *v);

/* Append the teardown part alone as a{sv} (Kill's answer carries it). */
int bus_append_teardown(sd_bus_message *m, const JobView *v);
