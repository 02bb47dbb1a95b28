/* SPDX-License-Identifier: MIT */
#pragma once

/* ListJobs and ListJobsPaged. Both are answered from memory (each job keeps
 * its session and the first JOB_COMMAND_HEAD_MAX bytes of its command), and
 * both are bounded: ListJobs refuses more than BUS_LIST_MAX entries with
 * LimitExceeded, ListJobsPaged gives at most BUS_PAGE_MAX per call, so no
 * answer can pass what the bus accepts. */

#include <systemd/sd-bus.h>

#define BUS_LIST_MAX 5000
#define BUS_PAGE_MAX 1000

int bus_method_list_jobs(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_jobs_paged(sd_bus_message *m, void *userdata, sd_bus_error *error);
