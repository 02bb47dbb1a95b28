/* SPDX-License-Identifier: MIT */
#pragma once

/* Who is calling and what they may touch. The owner of a request is the
 * caller's uid as the bus vouches for it, never an argument. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

typedef struct Daemon Daemon;
typedef struct Job Job;

/* The caller's effective uid from bus credentials; AccessDenied into error
 * when it cannot be established. */
int bus_caller_uid(sd_bus_message *m, uid_t *ret, sd_bus_error *error);

/* Whether uid may act on every job: root, or polkit's org.bgrun.manage-any. */
bool caller_is_admin(Daemon *d, sd_bus_message *m, uid_t uid);

/* Whether the caller of m may see job j. */
bool caller_may_see(Daemon *d, sd_bus_message *m, uid_t uid, const Job *j);

/* Resolve id to a job the caller may see; NoSuchJob for unknown, invalid or
 * foreign ids alike, so the answer never leaks that a job exists. */
int bus_find_job(Daemon *d, sd_bus_message *m, const char *id, Job **ret, sd_bus_error *error);
