/* SPDX-License-Identifier: MIT */
#pragma once

#include "job-id.h"

/* A supervisor started ahead of time (bgrund's pool, --pooled) waits on its
 * go socket for the job it is to run (supervisor-protocol.h). Returns 0 and
 * the job's id in the process that is to run it: this one, or the child it
 * forked into the job's cgroup when the cgroup came with the id; 1 in a
 * parent that handed its job to such a child and has only to exit;
 * -ECANCELED on EOF, when bgrund needs no more of it; other -errno. */
int pooled_wait_for_job(int go_fd, char ret[static JOB_ID_MAX]);
