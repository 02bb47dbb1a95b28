/* SPDX-License-Identifier: MIT */
#pragma once

/* What run asks of the job's life and limits beyond the command line's
 * -p: run --wait binds the job to this bgrun (BindToCaller), so a bgrun
 * that is killed, even with SIGKILL, leaves no job behind (not with --tty,
 * whose ^] detaches, and not a plain run, detached by design);
 * --strict-limits has bgrund refuse a limit the job's cgroup cannot
 * enforce (EnforceLimits); without it such a limit is said on stderr. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "launch-builder.h"

void run_limits_prepare(LaunchArgs *launch, bool wait, bool tty, bool strict);

/* After the Launch of job id: one line on stderr for each limit asked for
 * that its record says is not enforced. Asks only when a limit was asked. */
void run_limits_note_unenforced(sd_bus *bus, const char *id, const LaunchArgs *launch, bool strict);
