/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "bgrun/bus-api.h"
#include "bus-job-path.h"

const char *bus_job_path(const char *id, char buf[static BUS_JOB_PATH_MAX]) {
        snprintf(buf, BUS_JOB_PATH_MAX, BGRUN_JOB_PATH_PREFIX "/%s", id);
        return buf;
}
