/* SPDX-License-Identifier: MIT */
#pragma once

/* The command line, as parse_argv() in main.c leaves it for the verbs. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const char *arg_session;
extern const char *arg_directory;
extern const char *arg_timeout_string;
extern uint64_t arg_timeout_usec;
extern char **arg_environment; /* pointers into argv, NULL-terminated */
extern size_t arg_n_environment;
extern bool arg_wait;
extern bool arg_json;
extern bool arg_follow;

/* What --property set; for run, --timeout sets MaxRuntimeUSec too. */
extern bool arg_memory_max_set;
extern uint64_t arg_memory_max;
extern bool arg_tasks_max_set;
extern uint64_t arg_tasks_max;
extern bool arg_cpu_quota_set;
extern uint64_t arg_cpu_quota_per_sec_usec;
extern bool arg_max_runtime_set;
extern uint64_t arg_max_runtime_usec;
extern const char *arg_user;
