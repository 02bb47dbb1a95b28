/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <sys/socket.h>

#include "fd-passing.h"
#include "macro.h"

int fd_send(int sock, char tag, int fd, int flags) {
        struct iovec iov = { .iov_base = &tag, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (fd >= 0) {
                mh.msg_control = &control;
                mh.msg_controllen = sizeof control.buf;
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &fd, sizeof(int));
        }
        return sendmsg(sock, &mh, flags | MSG_NOSIGNAL) == 1 ? 0 : negative_errno();
}

int fd_receive(int sock, int flags, char *ret_tag, int *ret_fd) {
        char tag = 0;
        struct iovec iov = { .iov_base = &tag, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control.buf };
        ssize_t n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
        if (n < 0)
                return negative_errno();
        if (n == 0)
                return 0;
        int fd = -EBADF;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int)))
                        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        *ret_tag = tag;
        *ret_fd = fd;
        return 1;
}
