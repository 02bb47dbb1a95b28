/* SPDX-License-Identifier: MIT */
#pragma once

/* Who is told when a job's output grows (WaitOutput), without polling: one
 * inotify instance for bgrund, and a watch on a job's directory only while
 * someone waits on its output (counted: the first waiter arms it, the last
 * one gone removes it). What happens is told through the notifier's
 * output_grew; the job's end is told as ever (job_ended). */

typedef struct Runtime Runtime;
typedef struct Job Job;

/* One more waiter on j's output: 0, or -errno when the watch cannot be
 * armed (-ENOSPC: the kernel's max_user_watches). */
int output_watch_add(Runtime *rt, Job *j);
/* One waiter fewer; the last one's going removes the watch. */
void output_watch_remove(Runtime *rt, Job *j);
/* Drop j's watch, whoever waits (j is going). */
void output_watch_drop(Runtime *rt, Job *j);
/* Every watch and the inotify instance (bgrund is going). */
void output_watches_free(Runtime *rt);
