/* SPDX-License-Identifier: MIT */
#pragma once

/* The sandbox, applied by the command's own process between the fork and
 * the exec, while it is still root with bgrund's capabilities: so the
 * command never runs outside it for an instant. Everything here runs in the
 * child that shares the supervisor's memory (exec-child.c's rule): system
 * calls only, on the stack; the plan was made before the fork. */

#include "job-record.h"
#include "launch-options.h"
#include "sandbox-plan.h"

typedef struct SandboxFailure {
        int error;
        LaunchOption option; /* the option that could not be had */
        int entry;           /* >= 0: that path of option is not there for the job's user (the caller's input) */
        const char *step;
} SandboxFailure;

/* spec's sandbox: PrivateNetwork, then the mounts of plan (NULL: none) and
 * PrivateTmp, in a mount namespace of its own whose mounts never reach the
 * host. Paths are looked up as spec's user. 0, or -errno with *ret filled. */
int sandbox_apply(const JobSpec *spec, const SandboxPlan *plan, SandboxFailure *ret);
