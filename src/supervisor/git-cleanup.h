/* SPDX-License-Identifier: MIT */
#pragma once

#include "job-record.h"

/* Remove what ProtectGit left of job dir_fd in its user's tree
 * (git-placeholders.h), as that user, in a child of ours given at most a
 * few seconds (a path that hangs holds nothing up: the record stays for
 * bgrund's next pass); then forget the record. 0 when nothing is left. */
int git_cleanup(int dir_fd, const JobSpec *spec);
