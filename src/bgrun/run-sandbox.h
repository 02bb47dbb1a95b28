/* SPDX-License-Identifier: MIT */
#pragma once

/* run --sandbox PROFILE [--network | --no-network]: the profile's sandbox
 * options (core/sandbox-profile.h) for the job's working directory, with
 * what -p gave over them: a -p option replaces the profile's, but paths
 * add to its paths (--sandbox workspace -p ReadWritePaths=/cache keeps the
 * working directory writable). --no-network without a profile is
 * PrivateNetwork=yes. */

#include <stdbool.h>

#include "job-record.h"
#include "launch-builder.h"

/* profile: a SandboxProfile, or -1 for none. *keep owns what the values set
 * in launch point to, until the call is built (job_spec_done() it). */
int run_sandbox_prepare(LaunchArgs *launch, int profile, bool network, bool no_network, const char *cwd,
                        JobSpec *keep);
