/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

typedef struct BusService BusService;

/* Register the per-job objects /org/bgrun/Runtime1/job/<id>: one fallback
 * vtable with a find callback and a node enumerator, not one vtable per job.
 * A caller finds and enumerates only the jobs it may see.
 * On bus: the bus connection, or one peer-to-peer connection. */
int bus_job_objects_add(BusService *s, sd_bus *bus);
