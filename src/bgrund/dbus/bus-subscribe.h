/* SPDX-License-Identifier: MIT */
#pragma once

/* Subscribe and Unsubscribe, Manager methods. */

#include <systemd/sd-bus.h>

int bus_method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_unsubscribe(sd_bus_message *m, void *userdata, sd_bus_error *error);
