/* SPDX-License-Identifier: MIT */
#pragma once

/* Launch's a{sv} as a client builds it, by the option table
 * (core/launch-options.h): bgrun's command line and bgrun mcp's tools set
 * options here, each by its row, and append them the same way; bgrund
 * writes a record's "limits" with the one entry writer. Values are not
 * checked here: bgrund says what is wrong with one. */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "launch-options.h"

typedef struct LaunchArgs {
        LaunchOptionSet set;                    /* launch_options[i] was given */
        LaunchValue values[_LAUNCH_OPTION_MAX]; /* by launch_options[i].signature */
        char **lists[_LAUNCH_OPTION_MAX];       /* a list built a word at a time: ours, NULL-terminated */
        size_t n_lists[_LAUNCH_OPTION_MAX];
} LaunchArgs;

void launch_args_done(LaunchArgs *a);

/* Option i is given with the value v (signature set here; what v points to
 * stays the caller's); the last one wins. */
void launch_args_set(LaunchArgs *a, LaunchOption i, LaunchValue v);
/* Option i is not given after all (a list built here is dropped). */
void launch_args_unset(LaunchArgs *a, LaunchOption i);
/* A word more for list option i (copied), as systemd-run's -p adds one. */
int launch_args_add_word(LaunchArgs *a, LaunchOption i, const char *word);

static inline bool launch_args_is_set(const LaunchArgs *a, LaunchOption i) {
        return a->set & LAUNCH_OPTION_BIT(i);
}

/* Option i of s, for the options a JobSpec holds (a sandbox profile's):
 * its value points into s. */
static inline void launch_args_set_from(LaunchArgs *a, LaunchOption i, const JobSpec *s) {
        launch_args_set(a, i, launch_option_get(i, s));
}

/* Appends Launch's a{sv} to m: the numbers first, then the others, each in
 * the table's order (so that of two bad values bgrund names the same one,
 * whoever built the call). */
int launch_args_append(const LaunchArgs *a, sd_bus_message *m);

/* Append {name: v} as one entry {sv} of a dictionary being built;
 * -EOPNOTSUPP for a signature no row has yet. */
int bus_append_launch_entry(sd_bus_message *m, const char *name, const LaunchValue *v);
