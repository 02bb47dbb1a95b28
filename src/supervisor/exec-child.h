/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "input-control.h"
#include "network-join.h"
#include "job-record.h"
#include "payload-containment.h"
#include "sandbox-plan.h"
#include "socket-mediator.h"

/* What the child that becomes the command needs, all of it prepared before
 * the fork. */
typedef struct ExecChild {
        const JobSpec *spec;
        const PayloadContainment *containment;
        int output_fd; /* the command's stdout and stderr: the write end of the output pipe */
        const InputControl *input; /* its stdin or terminal; NULL: /dev/null */
        char **env;
        const SandboxPlan *sandbox; /* its file-system sandbox, planned before the fork; NULL: none */
        bool user_namespace;        /* a sandboxed job of an unprivileged bgrund: in a user namespace of its own */
        const SocketMediator *sockets; /* a sandboxed job's socket calls' (its broker's pair, the listener's
                                        * handshake); NULL: none */
        int git_record_fd;          /* with spec->protect_git: ProtectGit's placeholder record, for appending */
        /* A session's network to join (network-join.h): its namespace, and
         * with user_namespace the user namespace that owns it, which the
         * child enters instead of making one; NULL: it makes its own. */
        const NetworkJoin *network;
} ExecChild;

/* A failure that is the caller's input, not the supervisor's: checked by
 * the command's own process as the job's user (any error of the step: every
 * way of failing gets the same answer). */
typedef enum ExecRefusal {
        EXEC_NOT_REFUSED,
        EXEC_REFUSED_CWD,     /* its user cannot enter cwd */
        EXEC_REFUSED_PROGRAM, /* Argv's program is not in its PATH, or not one its user may execute */
        EXEC_REFUSED_DEADLINE, /* LaunchDeadlineUSec passed before the command could be executed */
        EXEC_REFUSED_SANDBOX, /* a sandbox option cannot be enforced here (ExecFailure.option says which) */
        EXEC_REFUSED_PATH,    /* a sandbox path is not there for its user (ExecFailure.option, .entry) */
        EXEC_LISTENER,        /* not a failure: the seccomp listener is the child's descriptor .error, its
                               * socket broker's pid .entry, with AllowedDomains the socket its proxy
                               * serves .proxy_fd; the child waits until the supervisor took them
                               * (socket-mediator.h) */
} ExecRefusal;

/* Why the child could not exec, as it reports it over the pipe. */
typedef struct ExecFailure {
        int error;
        ExecRefusal refused;
        int option;       /* EXEC_REFUSED_SANDBOX, _PATH: the LaunchOption */
        int entry;        /* EXEC_REFUSED_PATH: which of its paths */
        int proxy_fd;     /* EXEC_LISTENER: the child's listening socket for the job's proxy; -1: none */
        char step[48];
} ExecFailure;

#define EXEC_CHILD_STEP_CWD "change to the working directory"
#define EXEC_CHILD_STEP_PROGRAM "find the program"
#define EXEC_CHILD_STEP_DEADLINE "start before LaunchDeadlineUSec"

/* Fork the child that enters the containment, becomes the job's owner and
 * execs `/bin/sh -c COMMAND` (or, with Argv, the program found in the
 * job's PATH as execvp(3) finds it). In the parent: its pid, and the read end of
 * the close-on-exec pipe on which it reports a failure before exec. On
 * failure *ret_step says what failed. */
int exec_child_fork(const ExecChild *x, pid_t *ret_pid, int *ret_report_fd, const char **ret_step);

/* Block until the child exec'd (0: the pipe closed without a report) or
 * reported why it could not (1, *ret filled in), or, for a sandboxed job,
 * that its seccomp listener is there to take (1, EXEC_LISTENER). */
int exec_child_wait(int report_fd, ExecFailure *ret);
