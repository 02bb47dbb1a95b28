/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* The supervisor is the job's child subreaper: orphans of the job (double
 * forks, setsid()) become its children, not PID 1's, so it can find and
 * kill them, and must reap them. */
int subreaper_enable(void);

/* Reap exited children, so no zombie lingers and a scan of the process
 * tree sees only the living. Stops at keep, the main process, which is
 * reaped through its pidfd; 0 stops at nothing. */
void subreaper_reap_orphans(pid_t keep);
