/* SPDX-License-Identifier: MIT */
#pragma once

/* A Launch option's value on the bus, by its signature: bgrun sends Launch's
 * a{sv} with it and bgrund the record's "limits". (bgrund reads a caller's
 * values in bgrund/dbus/bus-args.c, within their bounds.) */

#include <systemd/sd-bus.h>

#include "launch-options.h"

/* Append {name: v} as one entry {sv} of a dictionary being built;
 * -EOPNOTSUPP for a signature no row has yet. */
int bus_append_launch_entry(sd_bus_message *m, const char *name, const LaunchValue *v);
