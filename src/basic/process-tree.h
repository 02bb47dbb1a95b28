/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* SIGKILL every living descendant of the calling process, through pidfds.
 * Each pid read from /proc/.../children is pinned with pidfd_open and then
 * re-checked to still have the parent it was found under, so a pid recycled
 * in between is never signalled. Zombies are skipped: they run nothing.
 * Returns how many living descendants were found (and signalled), or -errno.
 * The caller should be a child subreaper, so that orphans stay in its tree. */
int process_tree_kill_descendants(void);

/* The same walk with sig (a graceful stop's), each process left running so
 * that its handler runs; sig 0 only counts the living descendants. A
 * descendant except (0: none) and what is below it are left out. */
int process_tree_signal_descendants(int sig, pid_t except);

/* True when a living (not zombie) process has process group pgid; also true
 * when /proc cannot be read, so that death is never assumed. */
bool process_group_has_members(pid_t pgid);

/* Signal every member of process group pgid, whose leader leader_pidfd
 * refers to (verified by the caller): with PIDFD_SIGNAL_PROCESS_GROUP where
 * the kernel has it, else through each member's own pidfd, re-checked to be
 * in the group once pinned. Never a signal by number. Returns how many were
 * signalled (1 for the kernel's way), or -errno. */
int process_group_kill_by_leader(int leader_pidfd, pid_t pgid, int sig);
