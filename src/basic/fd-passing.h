/* SPDX-License-Identifier: MIT */
#pragma once

/* One byte and, with it, at most one descriptor, over a Unix socket: how
 * the supervisor and its child, and bgrund and a supervisor, hand each
 * other a pipe, a terminal's master or a seccomp listener. System calls
 * only, on the stack: the command's child may call them. */

/* tag, and fd with it (-EBADF: none). flags: sendmsg()'s (MSG_NOSIGNAL is
 * always added). 0, or -errno. */
int fd_send(int sock, char tag, int fd, int flags);

/* The next byte (*ret_tag) and the descriptor that came with it (*ret_fd,
 * close-on-exec; -EBADF: none). flags: recvmsg()'s. 1, 0 at the socket's
 * end, or -errno (-EAGAIN: nothing yet, with MSG_DONTWAIT). */
int fd_receive(int sock, int flags, char *ret_tag, int *ret_fd);
