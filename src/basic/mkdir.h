/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* mkdir -p: path and every missing directory above it, each new one with
 * mode (existing ones are left as they are, whatever their mode). */
int mkdir_p(const char *path, mode_t mode);

/* The same for path's parents only: the directories a file at path needs. */
int mkdir_parents(const char *path, mode_t mode);
