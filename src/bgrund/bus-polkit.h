/* SPDX-License-Identifier: MIT */
#pragma once

/* Asking polkit whether the sender of a message is granted an action, without
 * ever blocking bgrund. The first call for a message starts the query and
 * returns -EINPROGRESS; the method handler then returns without replying.
 * When polkit answers, the message is queued for dispatch again
 * (sd_bus_enqueue_for_read) and the second call returns the answer. */

#include <systemd/sd-bus.h>

typedef struct BusService BusService;
typedef struct PolkitQuery PolkitQuery;

#define BGRUN_POLKIT_MANAGE_ANY "org.bgrun.manage-any"

/* 1 granted, 0 not granted (also when polkit is not running or fails),
 * -EINPROGRESS while asking, other -errno when the query cannot start. */
int bus_polkit_check(BusService *s, sd_bus_message *m, const char *action);

/* Drop every pending query (on shutdown). */
void bus_polkit_queries_free(BusService *s);
