/* SPDX-License-Identifier: MIT */
/* The process-group backend, for when no cgroup can be had: bgrund spawns the
 * supervisor in its own session (supervisor-spawn.c), and the supervisor
 * makes the command lead its own session and process group. It is never
 * "contained": a process that calls setsid() leaves the group and cannot be
 * found again, and the record says so. */
#include "containment.h"
#include "daemon.h"
#include "supervisor-spawn.h"

static bool process_group_available(Daemon *d) {
        return true;
}

static int process_group_start(Job *j) {
        pid_t pid;
        int r = supervisor_spawn(j, false, &pid);
        if (r < 0)
                return r;
        /* Nothing to set up around it: it may go at once. */
        r = supervisor_let_go(j);
        if (r < 0)
                supervisor_abort(j);
        return r;
}

const ContainmentBackend process_group_backend = {
        .mechanism = MECHANISM_PROCESS_GROUP,
        .contains = false,
        .available = process_group_available,
        .start = process_group_start,
};

const ContainmentBackend *containment_backend(Mechanism m) {
        switch (m) {
        case MECHANISM_SYSTEMD: return &systemd_backend;
        case MECHANISM_PROCESS_GROUP: return &process_group_backend;
        default: return NULL;
        }
}
