/* SPDX-License-Identifier: MIT */
#pragma once

/* What a starting supervisor tells bgrund on its readiness pipe: one byte,
 * then EOF.
 *   'R'  the command was exec'd and run.json written: the job runs
 *   'C'  the job's user cannot enter its cwd (checked by the command's own
 *        process, as that user, where a lookup that hangs holds up this
 *        job only): nothing of the command ran, nothing of it is left, no
 *        result was published, and the supervisor exits; bgrund answers
 *        the Launch InvalidArgs and removes the job
 *   'P'  as 'C', for Argv's program: not found in the job's PATH, or not
 *        one its user may execute (execvp(3)'s search, as that user)
 *   'D'  as 'C', for LaunchDeadlineUSec: it passed before the command could
 *        be executed (looked at last, just before the exec)
 *   'S'  + one byte, the LaunchOption, + one byte, the errno: a sandbox
 *        option cannot be enforced here (no namespace may be made); as 'C',
 *        the Launch answered SandboxNotAvailable naming it
 *   'F'  + one byte, the LaunchOption, + one byte, which of its paths: a
 *        sandbox path is not there for the job's user (missing, not
 *        reachable, or changed while the sandbox was made: one answer);
 *        as 'C', the Launch answered InvalidArgs naming it
 *   'L'  + one byte of JobLimit bits: the job asked EnforceLimits and these
 *        limits have no controller in its cgroup; as for 'C', nothing ran
 *        and the job goes, the Launch answered LimitNotEnforced
 * EOF with no byte: setup failed; result.json says why where it could be
 * written. */
#define SUPERVISOR_READY 'R'
#define SUPERVISOR_CWD_REFUSED 'C'
#define SUPERVISOR_PROGRAM_REFUSED 'P'
#define SUPERVISOR_DEADLINE_PASSED 'D'
#define SUPERVISOR_SANDBOX_REFUSED 'S'
#define SUPERVISOR_LIMITS_REFUSED 'L'
#define SUPERVISOR_PATH_REFUSED 'F'

/* How a supervisor started ahead of time (--pooled) is told its job, on
 * its go socket (a socketpair; bgrund holds the other end): the id's
 * JOB_ID_LEN bytes, then one byte:
 *   '\n'  run it here: bgrund puts this process in the job's containment
 *   'C'   with the job's supervisor cgroup (SCM_RIGHTS): fork a child born
 *         in it (clone3 with CLONE_INTO_CGROUP | CLONE_PARENT, so bgrund's
 *         own child), answer 'P' with the child's pidfd, or 'E' and one
 *         byte of errno, and exit; the child runs the job
 * and then, as for every supervisor, the go byte. */
#define POOL_RUN_HERE '\n'
#define POOL_FORK_INTO_CGROUP 'C'
#define POOL_FORKED 'P'
#define POOL_FORK_FAILED 'E'

/* How bgrund talks to a running job's supervisor, which needs no live
 * bgrund and no bus: signals through the supervisor's verified pidfd, and,
 * for a job with input, a socket (below).
 *   SIGTERM   kill the job at once: cgroup.kill, confirm, publish; sent
 *             too when bgrund killed the payload itself, and then the
 *             supervisor waits for the teardown slot's lock and takes the
 *             slot's word (job-teardown.h)
 *   SIGUSR1   stop it gracefully, with a value (sigqueue's SI_QUEUE, so the
 *             kernel lets it cross processes) that carries the signal to
 *             send to every process of the job and the grace to wait
 *             before cgroup.kill
 * and a socket (below) for its input and its disk budget. */

#include <signal.h>
#include <stdint.h>

#define SUPERVISOR_KILL_SIGNAL SIGTERM
#define SUPERVISOR_STOP_SIGNAL SIGUSR1

/* grace_usec fits 40 bits (the contract caps it at 10 min), the signal 8. */
static inline uint64_t stop_request_pack(int sig, uint64_t grace_usec) {
        return ((uint64_t) (sig & 0xff) << 40) | (grace_usec & ((UINT64_C(1) << 40) - 1));
}

static inline void stop_request_unpack(uint64_t v, int *ret_sig, uint64_t *ret_grace_usec) {
        *ret_sig = (int) ((v >> 40) & 0xff);
        *ret_grace_usec = v & ((UINT64_C(1) << 40) - 1);
}

/* Every job has a SOCK_SEQPACKET socket of this name in its directory
 * (root's, 0600, in a directory only bgrund's user may enter), on which its
 * supervisor listens for as long as the job runs. On each connection it
 * sends one message first:
 *   'I'  with the input pipe's write end (SCM_RIGHTS): bgrund writes the
 *        job's input into it, never more than the pipe has room for
 *   'N'  there is no input (none was asked for, or it was closed)
 * then 'U' (below), and reads bgrund's requests, one message each:
 *   'C'  close the input: the supervisor drops its own write end (on a
 *        terminal: and sends the EOF character once all was relayed)
 *   'R'  + uint16_t rows, uint16_t columns (host order): resize the terminal
 *   'L'  + uint64_t: the bytes the job's output may keep on disk (its
 *        owner's budget, OutputMaxBytesPerUser=); at or below what it keeps
 *        now: no more room, its files grow no more
 * and the supervisor sends:
 *   'U'  + uint64_t: the bytes its output keeps on disk now; on every
 *        connection, once it is within SUPERVISOR_DISK_WINDOW / 2 of its
 *        limit, and every second while it has no room and output comes
 *   'T'  the teardown of an end from outside (SIGTERM, SIGUSR1, the
 *        wall-clock limit) is confirmed, or known to have failed, and the
 *        job's teardown slot says so durably (job-teardown.h): bgrund
 *        answers Kill and Stop from the slot; the result follows
 * A supervisor starts with a limit of SUPERVISOR_DISK_WINDOW: what a job
 * may keep on disk beyond its owner's budget before bgrund can say no.
 * A restarted bgrund connects again and gets the same pipe. */
#define SUPERVISOR_CONTROL_SOCKET "control"
#define CONTROL_INPUT 'I'
#define CONTROL_NO_INPUT 'N'
#define CONTROL_CLOSE 'C'
#define CONTROL_RESIZE 'R'
#define CONTROL_DISK_LIMIT 'L'
#define CONTROL_DISK_USED 'U'
#define CONTROL_TEARDOWN 'T'
#define CONTROL_DISK_MESSAGE_SIZE (1 + sizeof(uint64_t))

#define SUPERVISOR_DISK_WINDOW (UINT64_C(1) << 20)

/* The input pipe's size: what a job may have unread. */
#define SUPERVISOR_INPUT_PIPE_SIZE (1024 * 1024)
