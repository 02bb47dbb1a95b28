/* SPDX-License-Identifier: MIT */
#pragma once

/* A sandboxed job's two Landlock domains (sandbox-apply.h's rule: system
 * calls only). Both are scoped (ABI 6): a process in one may signal, and
 * connect to an abstract Unix socket of, only processes in it or in a
 * domain below it, and, as in every Landlock domain, ptrace (and read the
 * /proc/PID/ of) none outside it. The first is the job's socket broker's
 * (socket-broker.h); the command's own, below it, also keeps it from its
 * broker. The command's has file-system rules too (ABI 5): FIFOs and
 * device nodes are written, and devices' ioctls made, only where the job
 * may write (a read-only mount stops neither): beneath its writable mounts
 * (sandbox-apply.h), the writable devices of its /dev (its terminals, null,
 * zero, full, random, urandom, tty), /proc, and, where the sandbox leaves
 * the file system writable (no ProtectSystem=strict), everything but the
 * plan's read-only paths. A kernel without scoping is -EOPNOTSUPP: the
 * sandbox is refused, never weaker. */

#include "job-record.h"
#include "sandbox-apply.h"
#include "sandbox-plan.h"

/* The first domain, and no new privileges: a setuid program (sudo, su)
 * would take back what the sandbox takes away. */
int landlock_scope_domain(void);

/* The command's own, below it; looked up as the job's user. */
int landlock_job_domain(const SandboxPlan *plan, const SandboxWritable *writable);
