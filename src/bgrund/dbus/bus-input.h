/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-service.h"

/* The Manager's WriteInput (s id, ay data, b close) and ResizeTty (s id,
 * q rows, q columns). */
int bus_method_write_input(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_resize_tty(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* How long such a call waits for the job's supervisor to answer. */
#define BUS_INPUT_WAIT_USEC (1000ULL * 1000ULL)

/* j's supervisor answered, or j ended: answer its held calls, in order. */
void bus_input_ready(BusService *s, Job *j);
