/* SPDX-License-Identifier: MIT */
#pragma once

/* The supervisor's side of a sandboxed job's socket calls: the handler of
 * its seccomp notifications (sandbox-seccomp.h). For each connect(),
 * sendto() with an address, sendmsg() and sendmmsg() the job makes, it
 * takes what the call names and nothing the job could change afterwards:
 * the socket itself (pidfd_getfd: the open file, not its number), the
 * address and data copied out of the job's memory, the calling thread's
 * cwd, the descriptors the call passes; checks the call is still pending
 * (SECCOMP_IOCTL_NOTIF_ID_VALID) after each read; and hands it to the
 * job's socket broker (socket-broker.h), which makes it as the job's user.
 * Its answer is the call's. Nothing is ever let through for the kernel to
 * make, which would read the descriptor table and the memory again.
 *
 * The supervisor is the job's ancestor (and, in the system instance,
 * root), which is what reading another process's memory and descriptors
 * takes (Yama's ptrace_scope 1 included). Nothing here blocks: the
 * notification and the broker's socket are polled by supervise.c's loop,
 * and at most SOCKET_PENDING_MAX calls wait for the broker at once (one
 * more fails with EAGAIN). */

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SOCKET_MEDIATOR_POLLS 2
#define SOCKET_PENDING_MAX 64

typedef struct SocketPending {
        uint64_t cookie;
        uint64_t id;        /* the notification's */
        pid_t tid;          /* the calling thread */
        uint64_t mmsg_addr; /* sendmmsg: its first message's address in the job (its msg_len is ours to set) */
} SocketPending;

typedef struct SocketMediator {
        int channel_fd;       /* ours of the pair with the command's child, then with the broker */
        int child_channel_fd; /* the child's, until the fork */
        int taken_fd, child_taken_fd; /* a pipe: the listener was taken */
        int listener_fd;      /* the seccomp notifications */
        void *notification;   /* a struct seccomp_notif of the kernel's size */
        size_t notification_size;
        uint64_t next_cookie;
        SocketPending pending[SOCKET_PENDING_MAX];
        size_t n_pending;
        bool broker_gone;
} SocketMediator;

#define SOCKET_MEDIATOR_NULL \
        ((SocketMediator) { .channel_fd = -EBADF, .child_channel_fd = -EBADF, .taken_fd = -EBADF, \
                            .child_taken_fd = -EBADF, .listener_fd = -EBADF })

/* The socket pair, for a sandboxed job. */
int socket_mediator_open(SocketMediator *m);
/* The child's end (-EBADF: not a sandboxed job): its broker's, and the
 * pipe on which the child waits until its seccomp listener was taken. */
int socket_mediator_child_channel(const SocketMediator *m);
int socket_mediator_child_taken(const SocketMediator *m);
/* In the parent after the fork. */
void socket_mediator_forked(SocketMediator *m);
/* In the child, which has a copy of m: close the parent's ends (so that the
 * handshake ends when the parent's does). */
void socket_mediator_close_parents(const SocketMediator *m);
/* The child's listener, its descriptor fd: taken, and the child told. */
int socket_mediator_take_listener(SocketMediator *m, int child_pidfd, int fd);

void socket_mediator_poll(const SocketMediator *m, struct pollfd p[SOCKET_MEDIATOR_POLLS]);
void socket_mediator_dispatch(SocketMediator *m, const struct pollfd p[SOCKET_MEDIATOR_POLLS]);

void socket_mediator_done(SocketMediator *m);
