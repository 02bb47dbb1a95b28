/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

/* The Manager's ReadOutput, WaitOutput and OpenOutput methods. */
int bus_method_read_output(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_wait_output(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_open_output(sd_bus_message *m, void *userdata, sd_bus_error *error);

typedef struct BusService BusService;
typedef struct Job Job;
/* j's output may have grown: the WaitOutput calls with output past their
 * offset answer. */
void bus_output_grew(BusService *s, Job *j);
/* j ended: every WaitOutput on it answers. */
void bus_output_ended(BusService *s, Job *j);
