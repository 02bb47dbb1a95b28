/* SPDX-License-Identifier: MIT */
#pragma once

#include "input-control.h"
#include "job-record.h"
#include "job-teardown.h"
#include "output-relay.h"
#include "payload-containment.h"
#include "pidref.h"
#include "proxy-process.h"
#include "socket-mediator.h"

/* One job under supervision. main.c fills in the job's directory, its spec
 * and the readiness pipe; supervise() the rest. */
typedef struct Supervisor {
        int dir_fd;
        const char *state_dir; /* the job store (a sandbox hides it from the job) */
        JobSpec spec;
        int ready_fd; /* readiness pipe to bgrund, or -EBADF */
        PayloadContainment containment;
        OutputRelay output; /* the command's stdout and stderr */
        InputControl input; /* its stdin or terminal, and the control socket */
        SocketMediator sockets; /* a sandboxed job's socket calls */
        ProxyProcess proxy;     /* with AllowedDomains, the job's proxy */
        PidRef child; /* the command's main process, /bin/sh */
        /* The teardown slot's lock, once we decided how the job ends
         * (job-teardown.h); given: bgrund had killed it already, and the
         * slot's teardown is the job's. */
        int teardown_lock_fd;
        bool teardown_prepared; /* the slot has its block (job_teardown_prepare()) */
        bool teardown_given;
        JobTeardown given;
} Supervisor;

#define SUPERVISOR_NULL                                    \
        ((Supervisor) {                                    \
                .dir_fd = -EBADF,                          \
                .ready_fd = -EBADF,                        \
                .containment = PAYLOAD_CONTAINMENT_NULL,   \
                .output = OUTPUT_RELAY_NULL,               \
                .input = INPUT_CONTROL_NULL,               \
                .sockets = SOCKET_MEDIATOR_NULL,           \
                .proxy = PROXY_PROCESS_NULL,               \
                .child = PIDREF_NULL,                      \
                .teardown_lock_fd = -EBADF,                \
        })

void supervisor_done(Supervisor *s);

/* Set the containment up, start the command in it, tell bgrund it runs,
 * wait for its end (its exit, a Kill, a Stop or the wall-clock limit), tear it
 * down and publish the result. Whatever fails is published first. */
int supervise(Supervisor *s);
