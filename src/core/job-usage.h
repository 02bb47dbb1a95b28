/* SPDX-License-Identifier: MIT */
#pragma once

/* What a job used and which of its limits are enforced, from its cgroup:
 * the supervisor reads them at the end (the result keeps them), bgrund
 * while the job runs. Only what the kernel accounts: a figure it does not
 * keep is unknown, never 0. */

#include <stdbool.h>
#include <stdint.h>

#include "job-record.h"

typedef struct JobUsage {
        bool cpu_known;
        uint64_t cpu_usage_usec;  /* cpu.stat usage_usec: the cgroup's and its descendants' */
        bool memory_peak_known;
        uint64_t memory_peak;     /* memory.peak, where the memory controller is on */
} JobUsage;

/* Read the figures the cgroup (an open directory) has. */
void job_usage_read_cgroup(int cgroup_fd, JobUsage *ret);
/* The same by v2 path; -errno when it cannot be opened. */
int job_usage_read_cgroup_path(const char *path, JobUsage *ret);

/* The limits spec was launched with that controllers (a cgroup's
 * cgroup.controllers; NULL when the job has no cgroup) cannot enforce, as
 * JobLimit bits. */
unsigned job_limits_unenforced(const JobSpec *spec, const char *controllers);

/* EnforceLimits' refusal of the JobLimit bits, for the caller: each limit
 * with the controller that would enforce it ("MemoryMax (memory)"). The
 * message is *buf (malloc'd), or a static one without memory. */
const char *job_limits_refusal(unsigned bits, char **buf);
