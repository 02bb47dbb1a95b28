/* SPDX-License-Identifier: MIT */
#pragma once

/* Properties.Get, GetAll and Set with names past the specification's 255
 * bytes, refused before sd-bus answers them (bus-properties-guard.c). */

#include <systemd/sd-bus.h>

int bus_properties_guard_add(sd_bus *bus);
