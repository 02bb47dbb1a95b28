/* SPDX-License-Identifier: MIT */
#pragma once

/* Containment grants: the crash-safe record that a job's containment (its
 * unit and cgroup, or its process group) exists. A grant is opened before
 * anything of the job runs and released only when its teardown is confirmed;
 * the release records that nothing is left (dead). An open grant therefore
 * always names a containment that may still hold processes. Each job has its
 * own grant file, so concurrent grants never touch each other's records. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "job-record.h"
#include "mechanism.h"

#define GRANT_FILE "grant.json"

typedef enum GrantState {
        GRANT_OPEN,
        GRANT_RELEASED,
} GrantState;

typedef struct Grant {
        GrantState state;
        Mechanism mechanism;
        char *unit;   /* systemd: the transient unit, else "" */
        char *cgroup; /* systemd: the unit's cgroup, else "" */
        uid_t owner;  /* the job's, so that a job whose spec is damaged still has one
                       * (UID_INVALID in grants from before it was kept) */
        uint64_t opened_at;
        bool dead;    /* released: the teardown was confirmed */
        TeardownMethod method; /* released: how it was torn down */
        uint64_t released_at;
} Grant;

void grant_done(Grant *g);

/* Record (or re-record, when the mechanism changes before anything ran) an
 * open grant in the job's directory. */
int grant_open(int dir_fd, Mechanism mechanism, const char *unit, const char *cgroup, uid_t owner);

/* Mark the grant released with dead = true. Only for a confirmed teardown;
 * idempotent. -ENOENT when there is no grant. */
int grant_release(int dir_fd, TeardownMethod method);

/* The same for a grant already read from dir_fd (g is updated). */
int grant_release_read(int dir_fd, Grant *g, TeardownMethod method);

int grant_read(int dir_fd, Grant *ret);

int grant_to_json(const Grant *g, char **ret);
int grant_from_json(const char *json, Grant *ret);
