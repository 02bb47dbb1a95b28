/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/* Job ids: short, unique, object-path-safe: exactly JOB_ID_LEN chars of
 * [a-z0-9]. They are used to build paths on disk, so nothing that fails
 * job_id_is_valid() may ever reach a path. */
#define JOB_ID_LEN 10
#define JOB_ID_MAX (JOB_ID_LEN + 1)

/* Fill ret with a fresh random id from getrandom(). Returns 0 or -errno. */
int job_id_generate(char ret[static JOB_ID_MAX]);

/* True only for strings of exactly JOB_ID_LEN chars in [a-z0-9]. NULL-safe. */
bool job_id_is_valid(const char *id);
