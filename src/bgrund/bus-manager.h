/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct BusService BusService;

/* Register /org/bgrun/Runtime1 with the Manager interface. */
int bus_manager_add(BusService *s);
