/* SPDX-License-Identifier: MIT */
#pragma once

/* The sandbox profiles, for people and agents: named sets of the sandbox
 * options, as `bgrun run --sandbox` and `bgrun mcp --sandbox` ask for them
 * and as a job's record, BGRUN_SANDBOX and the MCP result name them.
 *   workspace  the file system read-only but the working directory, whose
 *              .git stays read-only (a hook planted there would run later
 *              outside any sandbox, as Codex keeps it); the home directory
 *              read-only; a /tmp of its own; no network
 *   read-only  the same with the working directory read-only too
 * Each with the network kept, if asked. Stricter in this order: off,
 * workspace, read-only; and no network is stricter than a network. */

#include <stdbool.h>

#include "job-record.h"

typedef enum SandboxProfile {
        SANDBOX_PROFILE_OFF,
        SANDBOX_PROFILE_WORKSPACE,
        SANDBOX_PROFILE_READ_ONLY,
        _SANDBOX_PROFILE_MAX,
} SandboxProfile;

const char *sandbox_profile_to_string(SandboxProfile p);
int sandbox_profile_from_string(const char *s); /* a SandboxProfile, or -EINVAL */

/* Set s's sandbox options to profile p's for the working directory cwd
 * (absolute), with or without a network (the other options of s as they
 * were; the sandbox's freed first). -ENOMEM. */
int sandbox_profile_spec(SandboxProfile p, const char *cwd, bool network, JobSpec *s);

/* Whether path (real, absolute) may be writable beside a workspace and the
 * sandbox still be that profile: never /, the home directory or one above
 * it, whose shell start-up files a job could plant (bgrun mcp --writable's
 * rule, and the profile's name). */
bool sandbox_profile_writable_beside(const char *path, const char *home);

/* The name of the profile s's sandbox options are, with or without a
 * network, for any workspace: "off" for none, "custom" for any other set. */
const char *sandbox_profile_name(const JobSpec *s);
