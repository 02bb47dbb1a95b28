/* SPDX-License-Identifier: MIT */
#pragma once

/* What a Launch asks, bus-free: the bounds of its arguments, the user its
 * job runs as, and the spec's defaults. The D-Bus face reads the call,
 * authorizes it and answers; this turns it into the spec that
 * runtime_launch() takes. Each failure is a negative errno and, where the
 * caller should hear why, a message (-EINVAL: the request is invalid). */

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

/* The spec of req with options o (whose environment it takes): the user
 * (o->user, or the caller's uid) with its groups, the defaults, and the
 * parent job when the caller runs inside one of its own. Nothing is created. */
int launch_request_spec(Runtime *rt, const LaunchRequest *req, LaunchOptions *o, JobSpec *spec, char **ret_message);
