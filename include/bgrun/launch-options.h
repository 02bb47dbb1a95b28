/* SPDX-License-Identifier: MIT */
#pragma once

/* The options Launch takes in its a{sv} argument, with their D-Bus
 * signatures. bgrund validates against this list and bgrun builds its calls
 * from it. An unknown key is an InvalidArgs error, never ignored.
 *
 * An X-macro: X(ENUM_SUFFIX, "key", "signature"). */

#define BGRUN_LAUNCH_OPTIONS(X)                                 \
        X(MAX_RUNTIME_USEC, "MaxRuntimeUSec", "t")              \
        X(ENVIRONMENT, "Environment", "as")                     \
        X(MEMORY_MAX, "MemoryMax", "t")                         \
        X(TASKS_MAX, "TasksMax", "t")                           \
        X(CPU_QUOTA_PER_SEC_USEC, "CPUQuotaPerSecUSec", "t")    \
        X(USER, "User", "s")                                    \
        X(STOP_SIGNAL, "StopSignal", "i")                       \
        X(STOP_GRACE_USEC, "StopGraceUSec", "t")               \
        X(STDIN, "Stdin", "s")                                  \
        X(TTY, "Tty", "b")                                      \
        X(TTY_ROWS, "TtyRows", "q")                             \
        X(TTY_COLUMNS, "TtyColumns", "q")                       \
        X(BIND_TO_CALLER, "BindToCaller", "b")                  \
        X(ENFORCE_LIMITS, "EnforceLimits", "b")
