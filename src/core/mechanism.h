/* SPDX-License-Identifier: MIT */
#pragma once

/* The containment mechanisms a job can run under, and what each promises.
 * How each works lives with bgrund (src/bgrund/containment/containment-*.c) and the
 * supervisor; this is the part records and configuration share. */

#include <stdbool.h>

typedef enum Mechanism {
        MECHANISM_SYSTEMD,       /* a transient systemd scope per job */
        MECHANISM_CGROUPFS,      /* a cgroup per job in a subtree delegated to bgrund */
        MECHANISM_PROCESS_GROUP, /* the uncontained fallback */
        _MECHANISM_MAX,
} Mechanism;

const char *mechanism_to_string(Mechanism m);
int mechanism_from_string(const char *s); /* Mechanism or -EINVAL */

/* Whether the mechanism gives every job a cgroup that can be killed as a
 * whole and confirmed empty. */
bool mechanism_contains(Mechanism m);

/* "systemd, cgroupfs or process_group": the names, for messages. */
const char *mechanism_names(void);
