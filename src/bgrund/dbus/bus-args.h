/* SPDX-License-Identifier: MIT */
#pragma once

/* The arguments a caller controls the size of, read from a method call
 * before anything else is done with it. Every refusal costs no more than
 * what was read to decide it: a key is judged before its value is read (an
 * unknown or repeated key, a wrong type: the value is never touched), and an
 * array stops at the first element past its bound. No side effects besides
 * reading m, so the fuzzer (tests/fuzz/fuzz-bus-args.c) drives them on
 * messages it builds. */

#include <systemd/sd-bus.h>

#include "launch-options.h"

/* Launch's a{sv} into o (initialised here; launch_options_done() after, even
 * on an error). InvalidArgs naming what was wrong. */
int bus_read_launch_options(sd_bus_message *m, LaunchOptions *o, sd_bus_error *error);

/* Stop's a{sv}: Signal (i) and GraceUSec (t), held to the rules of Launch's
 * StopSignal and StopGraceUSec; set in o under those options' bits. */
int bus_read_stop_options(sd_bus_message *m, LaunchOptions *o, sd_bus_error *error);
