/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's object path, which every part of the D-Bus face names. */

#include "job-id.h"

/* The object path of job id: BGRUN_JOB_PATH_PREFIX "/<id>". */
#define BUS_JOB_PATH_MAX (sizeof("/org/bgrun/Runtime1/job/") + JOB_ID_MAX)
const char *bus_job_path(const char *id, char buf[static BUS_JOB_PATH_MAX]);
