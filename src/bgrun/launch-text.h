/* SPDX-License-Identifier: MIT */
#pragma once

/* Launch's options as the command line writes them, into the builder
 * (shared/launch-builder.h): -p PROP=VALUE, -E NAME=VALUE, and the flags
 * that name an option (options.c), each by its row's LaunchText. bgrund
 * does the validating; here a value is only parsed from text. */

#include <stdint.h>

#include "launch-builder.h"

/* -p PROP=VALUE, with VALUE pointing into assignment, for the table's
 * options with a LaunchText. Logs a usage error. */
int launch_args_parse_property(LaunchArgs *a, const char *assignment);

/* Option i's value from text, as a flag of its own gives it (a list's: one
 * word more), what naming it in a usage error. Logs a usage error. */
int launch_args_parse_value(LaunchArgs *a, LaunchOption i, const char *what, const char *text);

/* -E NAME=VALUE. Logs a usage error. */
int launch_args_add_environment(LaunchArgs *a, const char *assignment);

/* A duration for option what, or a usage error naming it. */
int parse_duration_arg(const char *value, const char *what, uint64_t *ret);
