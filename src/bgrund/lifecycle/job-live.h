/* SPDX-License-Identifier: MIT */
#pragma once

/* A live job's parts (JobLive, job.h) and their release, one function a
 * part, at the bottom of the lifecycle: the files that use a part (the
 * start's, the input's, bgrund's own kill's) and the state machine, which
 * lets each go when the state that owned it ends, all call down here. */

#include "job.h"

/* j's live part, every descriptor closed (-EBADF). */
int job_make_live(Job *j);
/* Drop what only a live job needs (its end, its discard): every part. */
void job_release_live_state(Job *j);

/* A start's pipes, pidfd and watches closed (its supervisor is not killed:
 * job-start.c's supervisor_abort does that where it must). */
void job_start_release(JobStart *s);
/* The connection to the supervisor's control socket and the input pipe
 * dropped (the job ends, or it failed), with the input held for it. */
void job_input_disconnect(JobLive *l);
/* bgrund's own kill of the payload (job-kill.c) stopped, if under way. */
void job_kill_direct_done(JobLive *l);
