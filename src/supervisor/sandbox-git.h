/* SPDX-License-Identifier: MIT */
#pragma once

/* ProtectGit, in the command's child (sandbox-apply.h's rule: system
 * calls only, on the stack). A job that may write a repository may plant
 * what git runs for the user later, outside the sandbox: hooks, a
 * core.hooksPath or core.fsmonitor in its config. So for each repository
 * at the top of a writable path (the plan's ReadWritePaths):
 *   - the .git entry is pinned: a mount point, which cannot be renamed,
 *     removed or replaced (a .git file also read-only, so its gitdir: line
 *     stays; a symlinked one covered by a read-only file naming where it
 *     led);
 *   - in each of its git directories (the .git directory, a .git file's
 *     gitdir: target and its commondir), pinned the same way: hooks/ (also
 *     a symlinked one, whose target is made read-only), config, info/, a
 *     config.worktree, and the directory its core.hooksPath names are
 *     read-only; a linked worktree's config.worktree too; the rest stays
 *     writable, so git add, commit, branch and stash work;
 *   - what git would read there but is missing (a .git at the top of a
 *     writable path, hooks/, config, a config.worktree with
 *     extensions.worktreeConfig) gets a placeholder, covered read-only,
 *     so that the job cannot make one: recorded in the job's placeholder
 *     record (git-placeholders.h) before it is made, and removed by its
 *     inode when the job ends.
 * Not covered (bgrun(1)): repositories below the top of a writable path
 * (a nested one the job makes, or registers as a submodule), and files of
 * the working tree that a configuration includes (include.path). */

#include "job-record.h"
#include "sandbox-plan.h"

/* record_fd: the placeholder record, opened for appending; env: the job's
 * environment (its HOME, for a core.hooksPath of ~/). Lookups are the
 * job's user's (sandbox-apply.c set them). 0, or -errno and *ret_step. */
int sandbox_git_protect(const JobSpec *s, const SandboxPlan *plan, int record_fd, char *const *env,
                        const char **ret_step);
