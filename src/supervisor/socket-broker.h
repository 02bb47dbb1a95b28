/* SPDX-License-Identifier: MIT */
#pragma once

/* A sandboxed job's socket broker: the process that makes the job's
 * connect(), sendto() with an address and sendmsg() calls that the
 * supervisor took (socket-mediator.h), so that they are made
 *   - as the job's user: with its uid, its groups and no capability, so a
 *     socket's permissions and a server's SO_PEERCRED see the job's user,
 *     never root's (a sandbox never adds a right);
 *   - in the job's namespaces: its mounts resolve a path as the job's
 *     would, its network is the job's, its abstract sockets the job's;
 *   - under the job's first Landlock domain, of which the job's own is a
 *     child: abstract sockets outside the sandbox stay out of reach, and
 *     the job can neither signal nor ptrace it.
 * It is forked by the command's own process once all that is set, before
 * the command's own Landlock domain and seccomp filter, as a sibling of
 * the command (CLONE_PARENT: the supervisor's child, which no shell of the
 * job waits for), in a session of its own, and execs this binary afresh.
 *
 * A pathname Unix socket is resolved (openat2, no magic links, from the
 * calling thread's cwd for a relative one) and reached only if it lies on
 * one of the job's writable mounts: its writable paths, its private /tmp,
 * /var/tmp and /dev/shm, the runtime directory of its own, and the
 * writable mounts below them. The socket is connected to the inode
 * checked, through /proc/self/fd. Each call runs in a thread of its own,
 * so a path that hangs (a FUSE mount that never answers) holds up no other
 * call: past SOCKET_RESOLVE_TIMEOUT_USEC its call fails with ETIMEDOUT.
 * It is the supervisor's helper, not one of the job's processes: the
 * supervisor moves it out of the job's processes (PayloadContainmentOps'
 * adopt: its own cgroup), so that the job is empty, or stopped, without
 * it. It ignores every signal it can (a Stop's is the job's, whose calls
 * it still makes during their grace) and exits when the supervisor's end
 * closes, or with the supervisor. */

#include <stdint.h>

#define SOCKET_RESOLVE_TIMEOUT_USEC (10ULL * 1000 * 1000)
#define SOCKET_BROKER_THREADS_MAX 64

/* In the command's child (sandbox-apply.h's rule): fork the broker, which
 * execs this binary as `--socket-broker CHANNEL MOUNTS` with channel (the
 * supervisor's pair) and mount_ids (the writable mounts' ids, comma
 * separated). Its pid (the supervisor's child), or -errno. */
int socket_broker_spawn(int channel, const char *mount_ids);

/* The broker itself: argv after "--socket-broker". */
int socket_broker_main(int argc, char **argv);
