/* SPDX-License-Identifier: MIT */
#pragma once

/* The keys of a job's record, as Get and Wait return it (a{sv}) and as the
 * job object's properties carry it, with their D-Bus signatures, in the order
 * bgrund sends them. bgrund builds its replies and properties from these
 * lists and bgrun reads them through the same lists, so the two cannot
 * drift; a client may include this header for the names.
 *
 * Each list is an X-macro: X(ENUM_SUFFIX, "key", "signature"). */

#define BGRUN_RECORD_KEYS(X)                          \
        X(ID, "id", "s")                              \
        X(SESSION_ID, "session_id", "s")              \
        X(COMMAND, "command", "s")                    \
        X(CWD, "cwd", "s")                            \
        X(OWNER, "owner", "u")                        \
        X(STATUS, "status", "s")                      \
        X(EXIT_CODE, "exit_code", "i")                \
        X(SIGNAL, "signal", "i")                      \
        X(TIMED_OUT, "timed_out", "b")                \
        X(PID, "pid", "u")                            \
        X(START_TOKEN, "start_token", "s")            \
        X(STARTED_AT, "started_at", "t")              \
        X(FINISHED_AT, "finished_at", "t")            \
        X(OUTPUT_BYTES, "output_bytes", "t")          \
        X(OUTPUT_TRUNCATED, "output_truncated", "b")  \
        X(OUTPUT_DROPPED_BYTES, "output_dropped_bytes", "t") \
        X(CONTAINMENT, "containment", "a{sv}")        \
        X(TEARDOWN, "teardown", "a{sv}")              \
        X(PARENT, "parent", "s")                      \
        X(STDIN, "stdin", "s")                        \
        X(USER, "user", "s")                          \
        X(LIMITS, "limits", "a{sv}")                  \
        X(LIMITS_UNENFORCED, "limits_unenforced", "as") \
        X(CPU_USAGE_USEC, "cpu_usage_usec", "t")      \
        X(MEMORY_PEAK, "memory_peak", "t")            \
        X(BIND_TO_CALLER, "bind_to_caller", "b")      \
        X(REQUEST_ID, "request_id", "s")              \
        X(QUEUE_POSITION, "queue_position", "u")      \
        X(FAILURE, "failure", "s")                    \
        X(ARGV, "argv", "as")                         \
        X(SANDBOX, "sandbox", "a{sv}")                \
        X(NETWORK_DENIED, "network_denied", "a{st}")

/* The record's "limits" dictionary holds the limits the job was launched
 * with, named and typed as Launch's options (the rows of the option table,
 * src/core/launch-options.h, flagged LAUNCH_LIMIT); one not set is absent. */

/* The record's "sandbox" dictionary holds the sandbox options as applied,
 * named and typed as Launch's options (the rows flagged LAUNCH_SANDBOX),
 * and "mechanisms" (as): how the kernel enforces them. Empty for a job
 * launched without a sandbox. */

/* The record's "containment" dictionary. */
#define BGRUN_CONTAINMENT_KEYS(X)                     \
        X(MECHANISM, "mechanism", "s")                \
        X(CONTAINED, "contained", "b")                \
        X(EXECUTED, "executed", "b")                  \
        X(UNIT, "unit", "s")                          \
        X(CGROUP, "cgroup", "s")

/* The record's "teardown" dictionary, also in Kill's answer. */
#define BGRUN_TEARDOWN_KEYS(X)                        \
        X(DEAD, "dead", "b")                          \
        X(METHOD, "method", "s")                      \
        X(CONFIRMED_AT, "confirmed_at", "t")

/* Kill's answer. */
#define BGRUN_KILL_KEYS(X)                            \
        X(KILLED, "killed", "b")                      \
        X(TEARDOWN, "teardown", "a{sv}")

/* Reap's answer. */
#define BGRUN_REAP_KEYS(X)                            \
        X(BACKGROUND_KEPT, "background_kept", "u")    \
        X(RELEASED, "released", "u")                  \
        X(ORPHANS_KILLED, "orphans_killed", "u")
