/* SPDX-License-Identifier: MIT */
#pragma once

#include "job-record.h"

/* The command's environment, built before fork: a login-like base (PATH,
 * HOME, USER, LOGNAME, SHELL, BGRUN_JOB_ID, in this order), then the caller's
 * entries in theirs. A caller's entry whose name is already there replaces
 * it in place. *ret is a malloc'd NULL-terminated list. */
int job_environment(const JobSpec *spec, char ***ret);
