/* SPDX-License-Identifier: MIT */
#pragma once

/* A sandboxed job's own /dev (sandbox-apply.h's rule: system calls only). */

#include <stdbool.h>
#include <stddef.h>

#include "job-record.h"
#include "sandbox-apply.h"
#include "sandbox-plan.h"

/* Over dev_fd (the /dev the job sees so far), as the plan's SANDBOX_DEV
 * mount p->mounts[first - 1] says, with the devices the plan's paths
 * below it name. own_userns: the job's user namespace is its own (its
 * user is the only one mapped). 0, or -errno with *f filled. */
int sandbox_dev_build(const JobSpec *s, const SandboxPlan *p, size_t first, int dev_fd, bool own_userns,
                      SandboxFailure *f);
