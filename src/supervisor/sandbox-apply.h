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

/* Where the job's user namespace comes from: bgrund --user has no
 * privilege over the host's namespaces, so a sandboxed job of its gets a
 * user namespace of its own first (exec-child.c makes it with the child,
 * or the child makes it itself when it does not share our memory). */
typedef enum SandboxUserNamespace {
        SANDBOX_USERNS_NONE,  /* root: the host's */
        SANDBOX_USERNS_MADE,  /* the child was cloned into a new one: only its maps are to write */
        SANDBOX_USERNS_MAKE,  /* the child makes it (unshare) */
} SandboxUserNamespace;

typedef struct SandboxFailure {
        int error;
        LaunchOption option; /* the option that could not be had */
        int entry;           /* >= 0: that path of option is not there for the job's user (the caller's input) */
        const char *step;
} SandboxFailure;

/* spec's sandbox: PrivateNetwork, then the mounts of plan (NULL: none) and
 * PrivateTmp, in a mount namespace of its own whose mounts never reach the
 * host (paths looked up as spec's user), and, for any sandboxed job, a
 * Landlock domain of its own and no new privileges: no way out. 0, or
 * -errno with *ret filled. */
int sandbox_apply(const JobSpec *spec, const SandboxPlan *plan, SandboxUserNamespace userns, SandboxFailure *ret);
