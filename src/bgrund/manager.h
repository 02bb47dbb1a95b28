/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Daemon Daemon;

/* Register /org/bgrun/Runtime1 with the Manager interface. */
int manager_add_objects(Daemon *d);
void manager_emit_running_jobs_changed(Daemon *d);
