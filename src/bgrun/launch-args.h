/* SPDX-License-Identifier: MIT */
#pragma once

/* Launch's options as the command line gives them (-p PROP=VALUE, -E, and -t
 * for run), by the option table (core/launch-options.h), and as they go on
 * the bus. bgrund does the validating; here a value is only parsed from text. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "launch-options.h"

typedef struct LaunchArgs {
        LaunchOptionSet set;                    /* launch_options[i] was given */
        LaunchValue values[_LAUNCH_OPTION_MAX]; /* by launch_options[i].signature */
        char **environment;                     /* -E: pointers into argv, NULL-terminated; the array is ours */
        size_t n_environment;
        char **lists[_LAUNCH_OPTION_MAX];       /* -p of a LIST row: its words, ours, NULL-terminated */
        size_t n_lists[_LAUNCH_OPTION_MAX];
} LaunchArgs;

void launch_args_done(LaunchArgs *a);

/* Option i is given with the value v (signature set here); the last one wins. */
void launch_args_set(LaunchArgs *a, LaunchOption i, LaunchValue v);
static inline bool launch_args_is_set(const LaunchArgs *a, LaunchOption i) {
        return a->set & LAUNCH_OPTION_BIT(i);
}

/* -p PROP=VALUE, with VALUE pointing into assignment, for the table's options
 * with a LaunchText. Logs a usage error. */
int launch_args_parse_property(LaunchArgs *a, const char *assignment);

/* -E NAME=VALUE (a pointer into argv, kept). Logs a usage error. */
int launch_args_add_environment(LaunchArgs *a, char *assignment);

/* A duration for option what, or a usage error naming it. */
int parse_duration_arg(const char *value, const char *what, uint64_t *ret);

/* Appends Launch's a{sv} to m. */
int launch_args_append(const LaunchArgs *a, sd_bus_message *m);
