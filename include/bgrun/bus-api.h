/* SPDX-License-Identifier: MIT */
#pragma once

/* The names a client of org.bgrun.Runtime1 needs: the bus name, objects and
 * interfaces, and the errors (see also record-keys.h; Launch's options are the table of
 * src/core/launch-options.h). */
#define BGRUN_ERROR_ACCESS_DENIED "org.bgrun.Runtime1.Error.AccessDenied"
#define BGRUN_ERROR_NO_SUCH_JOB "org.bgrun.Runtime1.Error.NoSuchJob"
#define BGRUN_ERROR_CONTAINMENT_REFUSED "org.bgrun.Runtime1.Error.ContainmentRefused"
#define BGRUN_ERROR_JOB_NOT_FINISHED "org.bgrun.Runtime1.Error.JobNotFinished"
#define BGRUN_ERROR_LIMIT_EXCEEDED "org.bgrun.Runtime1.Error.LimitExceeded"
#define BGRUN_ERROR_NO_INPUT "org.bgrun.Runtime1.Error.NoInput"
#define BGRUN_ERROR_INPUT_FULL "org.bgrun.Runtime1.Error.InputFull"
#define BGRUN_ERROR_LIMIT_NOT_ENFORCED "org.bgrun.Runtime1.Error.LimitNotEnforced"
#define BGRUN_ERROR_DEADLINE_PASSED "org.bgrun.Runtime1.Error.DeadlinePassed"
#define BGRUN_ERROR_SANDBOX_NOT_AVAILABLE "org.bgrun.Runtime1.Error.SandboxNotAvailable"
#define BGRUN_ERROR_INVALID_ARGS "org.freedesktop.DBus.Error.InvalidArgs"

#define BGRUN_BUS_NAME "org.bgrun.Runtime1"
/* bgrund --listen's default sockets, where there is no bus: the system
 * instance's, and the user instance's below $XDG_RUNTIME_DIR. */
#define BGRUN_LISTEN_ADDRESS_SYSTEM "unix:path=/run/bgrun/bus"
#define BGRUN_LISTEN_SOCKET_USER "bgrun/bus"
#define BGRUN_MANAGER_PATH "/org/bgrun/Runtime1"
#define BGRUN_MANAGER_INTERFACE "org.bgrun.Runtime1.Manager"
#define BGRUN_JOB_PATH_PREFIX "/org/bgrun/Runtime1/job"
#define BGRUN_JOB_INTERFACE "org.bgrun.Runtime1.Job"
