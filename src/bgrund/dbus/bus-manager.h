/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

typedef struct BusService BusService;

/* Register /org/bgrun/Runtime1 with the Manager interface on bus (the bus
 * connection, or one peer-to-peer connection). */
int bus_manager_add(BusService *s, sd_bus *bus);
