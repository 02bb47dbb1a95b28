/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

/* The Manager's Launch method: read the arguments, validate them (Launch's
 * options through the shared table), authorize, resolve the user the job
 * runs as, and hand the spec to the runtime. Its answer comes when the job
 * runs, or never started (bus-service.c). */
int bus_method_launch(sd_bus_message *m, void *userdata, sd_bus_error *error);
