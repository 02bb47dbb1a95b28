/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

/* The Manager's ReadOutput and OpenOutput methods. */
int bus_method_read_output(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_open_output(sd_bus_message *m, void *userdata, sd_bus_error *error);
