/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct BusService BusService;

/* Register the per-job objects /org/bgrun/Runtime1/job/<id>: one fallback
 * vtable with a find callback and a node enumerator, not one vtable per job.
 * A caller finds and enumerates only the jobs it may see. */
int bus_job_objects_add(BusService *s);
