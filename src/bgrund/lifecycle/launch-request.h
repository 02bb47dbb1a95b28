/* SPDX-License-Identifier: MIT */
#pragma once

/* What a Launch asks, bus-free: the bounds of its arguments, the user its
 * job runs as, and the spec's defaults. The D-Bus face reads the call,
 * authorizes it and answers; this turns it into the spec that
 * runtime_launch() takes. Each failure is a negative errno and, where the
 * caller should hear why, a message (-EINVAL: the request is invalid). */

#include <errno.h>
#include <sys/types.h>

#include "job-record.h"
#include "launch-options.h"
#include "runtime.h"

typedef struct LaunchRequest {
        const char *command, *session, *cwd;
        uid_t uid;      /* the caller: the job's owner */
        pid_t pid;      /* the caller's process, 0 when unknown */
} LaunchRequest;

/* The arguments' bounds, checked before anything else is read. */
int launch_request_check(const LaunchRequest *req, char **ret_message);

/* The wall-clock limit of a job that asked for asked_usec (0: none) under
 * limits: DefaultMaxRuntimeSec= for none, else MaxRuntimeSec=, else none
 * (*ret 0); more than MaxRuntimeSec= is BGRUN_ERROR(OVER_LIMIT). */
int launch_request_runtime(const BgrunLimits *limits, uint64_t asked_usec, uint64_t *ret, char **ret_message);

/* The command's rule: a shell command line, or "" with Argv (InvalidArgs
 * otherwise). */
int launch_request_command(const LaunchRequest *req, const LaunchOptions *o, char **ret_message);

/* A Launch of RequestId that found job, whose spec is found: 0 when it asks
 * for the same command (the same shell command line, or the same Argv) in
 * the same sandbox, or
 * -EINVAL naming the job (then nothing is started). */
int launch_request_same(const LaunchRequest *req, const LaunchOptions *o, const char *job_id, const JobSpec *found,
                        char **ret_message);

/* The spec of req with options o (which it takes, leaving o empty): the user
 * (User=, or the caller's uid) with its groups, and the parent job when the
 * caller runs inside one of its own, and its wall-clock limit under rt's
 * [Limits] (none without rt). Nothing is created. */
int launch_request_spec(Runtime *rt, const LaunchRequest *req, LaunchOptions *o, JobSpec *spec, char **ret_message);
