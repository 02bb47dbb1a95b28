/* SPDX-License-Identifier: MIT */
#pragma once

/* cgroup v2 operations: find the unified hierarchy, make and enter child
 * cgroups, kill a cgroup as a whole and confirm it empty. Paths are relative
 * to the v2 root ("/bgrun.slice/bgrun-job-x.scope/payload"). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* "/sys/fs/cgroup" on a pure v2 host, "/sys/fs/cgroup/unified" on a hybrid
 * one; -ENOMEDIUM when there is no cgroup v2 hierarchy. Probed once. */
int cgroup2_root(const char **ret);

/* The v2 path of pid (0 = self) from /proc/PID/cgroup. */
int cgroup_path_of_pid(pid_t pid, char **ret);

/* Open a cgroup directory by its v2 path. */
int cgroup_open(const char *path, int *ret_fd);

/* mkdir name below parent_fd (existing is fine) and open it. */
int cgroup_create_child(int parent_fd, const char *name, int *ret_fd);

/* Write value to the cgroup's file name (memory.max, cgroup.subtree_control…). */
int cgroup_write_attribute(int cgroup_fd, const char *name, const char *value);

/* A cgroup file's first line (cgroup.subtree_control, memory.max…). */
int cgroup_read_attribute(int cgroup_fd, const char *name, char **ret);

/* The pids in the cgroup's cgroup.procs (its own processes, not its
 * descendants'), in *ret (NULL when there are none; the caller frees it):
 * -E2BIG when there are more than max, -EBADMSG for a line that is no pid. */
int cgroup_read_pids(int cgroup_fd, size_t max, pid_t **ret, size_t *ret_n);

/* The controllers available in the cgroup ("cpu memory pids", maybe ""). */
int cgroup_read_controllers(int cgroup_fd, char **ret);
bool cgroup_has_controller(const char *controllers, const char *name);

/* Move pid (0 = the caller) into the cgroup. */
int cgroup_attach(int cgroup_fd, pid_t pid);

/* SIGKILL every process in the cgroup and its descendants at once through
 * cgroup.kill. -EOPNOTSUPP on kernels without it (before 5.14); 0 when the
 * cgroup was removed already (it was empty then). */
int cgroup_kill(int cgroup_fd);

/* 1 when the cgroup or a descendant holds a process, 0 when empty or
 * removed: a cgroup can only be removed once empty. */
int cgroup_is_populated(int cgroup_fd);

/* A watch of cgroup.events for an event loop that waits for "populated 0"
 * without polling: the file itself, open, which poll() and epoll report
 * with CGROUP_EVENTS_WATCH_EVENTS whenever it changed since it was last
 * read (kernfs's own notification; the kernel rate-limits it to about one
 * per 10 ms). Not inotify: closing an inotify instance that had a watch
 * waits for an SRCU grace period (measured: 15 ms), which a job's end
 * and bgrund's loop would pay. */
int cgroup_events_watch(int cgroup_fd, int *ret_watch_fd);
#define CGROUP_EVENTS_WATCH_EVENTS 0x002 /* POLLPRI, EPOLLPRI; POLLERR comes with it */

/* Through a watch: 1 when populated, 0 when empty or removed; re-arms it
 * (a change is reported once per read). */
int cgroup_events_watch_populated(int watch_fd);

/* Block until the cgroup is empty or timeout_usec passed (-ETIMEDOUT).
 * Looks first, so an empty cgroup costs one read; else waits on a watch,
 * with poll(), never a busy loop. */
int cgroup_wait_empty(int cgroup_fd, uint64_t timeout_usec);
