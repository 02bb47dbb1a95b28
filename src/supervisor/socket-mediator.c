/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "log.h"
#include "macro.h"
#include "socket-mediator.h"
#include "socket-protocol.h"

#ifndef PIDFD_THREAD
#  define PIDFD_THREAD O_EXCL
#endif

int socket_mediator_open(SocketMediator *m) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return negative_errno();
        m->channel_fd = sp[0];
        m->child_channel_fd = sp[1];
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        m->child_taken_fd = p[0];
        m->taken_fd = p[1];
        /* A request carries up to SOCKET_DATA_MAX: room for a few. Root
         * may pass the system's maximum, others get what it allows. */
        int size = 4 * (int) (sizeof(SocketRequest) + SOCKET_DATA_MAX);
        for (int i = 0; i < 2; i++)
                if (setsockopt(sp[i], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
                        (void) setsockopt(sp[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        struct seccomp_notif_sizes sizes = {};
        if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
                return negative_errno();
        m->notification_size = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif : sizeof(struct seccomp_notif);
        m->notification = calloc(1, m->notification_size);
        return m->notification ? 0 : -ENOMEM;
}

int socket_mediator_child_channel(const SocketMediator *m) {
        return m->child_channel_fd;
}

int socket_mediator_child_taken(const SocketMediator *m) {
        return m->child_taken_fd;
}

void socket_mediator_close_parents(const SocketMediator *m) {
        if (m->channel_fd >= 0)
                close(m->channel_fd);
        if (m->taken_fd >= 0)
                close(m->taken_fd);
}

void socket_mediator_forked(SocketMediator *m) {
        m->child_channel_fd = safe_close(m->child_channel_fd);
        m->child_taken_fd = safe_close(m->child_taken_fd);
}

int socket_mediator_take_listener(SocketMediator *m, int child_pidfd, int fd) {
        int r = 0;
        m->listener_fd = (int) syscall(SYS_pidfd_getfd, child_pidfd, fd, 0);
        if (m->listener_fd < 0)
                r = negative_errno();
        int flags = r < 0 ? -1 : fcntl(m->listener_fd, F_GETFL);
        if (r >= 0 && (flags < 0 || fcntl(m->listener_fd, F_SETFL, flags | O_NONBLOCK) < 0))
                r = negative_errno();
        if (r >= 0 && write(m->taken_fd, "t", 1) != 1)
                r = negative_errno();
        /* Closed either way: without the byte, the child fails rather than run unfiltered. */
        m->taken_fd = safe_close(m->taken_fd);
        return r;
}

void socket_mediator_poll(const SocketMediator *m, struct pollfd p[SOCKET_MEDIATOR_POLLS]) {
        p[0] = (struct pollfd) { .fd = m->listener_fd, .events = POLLIN };
        p[1] = (struct pollfd) { .fd = m->broker_gone ? -EBADF : m->channel_fd, .events = POLLIN };
}

/* The call's answer: its return value, or -errno. */
static void answer(SocketMediator *m, uint64_t id, int64_t result) {
        struct seccomp_notif_resp resp = {
                .id = id,
                .val = result >= 0 ? result : 0,
                .error = result < 0 ? (int32_t) result : 0,
        };
        /* ENOENT: the caller is gone (killed), and the call with it. */
        if (ioctl(m->listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                log_debug_errno(negative_errno(), "Cannot answer a socket call of the job: %m");
}

static bool still_pending(const SocketMediator *m, uint64_t id) {
        return ioctl(m->listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) >= 0;
}

/* len bytes of the job's thread tid at addr. */
static int read_job(pid_t tid, uint64_t addr, void *buf, size_t len) {
        if (len == 0)
                return 0;
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = len };
        ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
        return n == (ssize_t) len ? 0 : n < 0 ? negative_errno() : -EFAULT;
}

/* A pidfd of the process tid is a thread of. */
static int open_pidfd(pid_t tid) {
        int fd = (int) syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
        if (fd >= 0 || errno != EINVAL)
                return fd >= 0 ? fd : negative_errno();
        /* Before 6.9: through its thread group's leader. */
        char path[64], line[128];
        snprintf(path, sizeof path, "/proc/%d/status", (int) tid);
        FILE *f = fopen(path, "re");
        if (!f)
                return negative_errno();
        pid_t tgid = 0;
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "Tgid: %d", &tgid) == 1)
                        break;
        fclose(f);
        if (tgid <= 0)
                return -ESRCH;
        fd = (int) syscall(SYS_pidfd_open, tgid, 0);
        return fd >= 0 ? fd : negative_errno();
}

/* One call, taken: what is sent to the broker. */
typedef struct Call {
        SocketRequest req;
        unsigned char data[SOCKET_DATA_MAX];
        int fds[2 + SOCKET_FDS_MAX]; /* the socket, the cwd, the passed ones */
        size_t n_fds;
        uint64_t mmsg_addr;
} Call;

static void call_done(Call *c) {
        for (size_t i = 0; i < c->n_fds; i++)
                safe_close(c->fds[i]);
        c->n_fds = 0;
}

/* A datagram's data (or the most of a stream send that one call takes)
 * from the job's iovecs. */
static int read_data(pid_t tid, int sock, uint64_t iov_addr, uint64_t iov_len, Call *c) {
        int type = 0;
        socklen_t tl = sizeof type;
        if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl) < 0)
                return negative_errno();
        if (iov_len > 1024)
                return -EINVAL; /* UIO_MAXIOV */
        size_t total = 0;
        for (uint64_t i = 0; i < iov_len; i++) {
                struct iovec v;
                int r = read_job(tid, iov_addr + i * sizeof v, &v, sizeof v);
                if (r < 0)
                        return r;
                size_t take = v.iov_len;
                if (total + take > SOCKET_DATA_MAX) {
                        /* A stream may send less than asked; a datagram is whole or not at all. */
                        if (type != SOCK_STREAM)
                                return -EMSGSIZE;
                        take = SOCKET_DATA_MAX - total;
                }
                r = read_job(tid, (uint64_t) (uintptr_t) v.iov_base, c->data + total, take);
                if (r < 0)
                        return r;
                total += take;
                if (total == SOCKET_DATA_MAX)
                        break;
        }
        c->req.data_len = (uint32_t) total;
        return 0;
}

/* The call's control messages: its descriptors taken from the job, the rest as they are. */
static int read_control(pid_t tid, int pidfd, uint64_t addr, uint64_t len, Call *c) {
        if (len == 0)
                return 0;
        if (len > 4096)
                return -EINVAL;
        _cleanup_free_ unsigned char *buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        int r = read_job(tid, addr, buf, len);
        if (r < 0)
                return r;
        struct msghdr mh = { .msg_control = buf, .msg_controllen = len };
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                if (cm->cmsg_len < CMSG_LEN(0) || (unsigned char *) cm + cm->cmsg_len > buf + len)
                        return -EINVAL;
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                        size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < n; i++) {
                                if (c->req.n_fds >= SOCKET_FDS_MAX)
                                        return -ETOOMANYREFS;
                                int fd;
                                memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
                                int copy = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
                                if (copy < 0)
                                        return negative_errno();
                                c->fds[c->n_fds++] = copy;
                                c->req.n_fds++;
                        }
                        continue;
                }
                size_t space = CMSG_ALIGN(cm->cmsg_len);
                if (c->req.control_len + space > SOCKET_CONTROL_MAX)
                        return -EINVAL;
                memcpy(c->req.control + c->req.control_len, cm, cm->cmsg_len);
                c->req.control_len += (uint32_t) space;
        }
        return 0;
}

static int read_address(pid_t tid, uint64_t addr, uint64_t len, Call *c) {
        if (addr == 0 || len == 0)
                return 0;
        if (len > sizeof c->req.addr)
                return -EINVAL;
        c->req.addr_len = (uint32_t) len;
        return read_job(tid, addr, &c->req.addr, len);
}

/* A Unix socket's relative path is the calling thread's cwd's. */
static int take_cwd(pid_t tid, Call *c) {
        const struct sockaddr_un *sa = (const struct sockaddr_un *) &c->req.addr;
        if (c->req.addr_len <= offsetof(struct sockaddr_un, sun_path) || sa->sun_family != AF_UNIX ||
            sa->sun_path[0] == '\0' || sa->sun_path[0] == '/')
                return 0;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/cwd", (int) tid);
        int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        /* After the socket: fds[1]. */
        memmove(c->fds + 2, c->fds + 1, (c->n_fds - 1) * sizeof(int));
        c->fds[1] = fd;
        c->n_fds++;
        c->req.has_cwd = true;
        return 0;
}

/* What the call names, out of the job: 0, or the call's -errno. */
static int take_call(const struct seccomp_notif *n, Call *c) {
        pid_t tid = (pid_t) n->pid;
        const __u64 *a = n->data.args;
        _cleanup_close_ int pidfd = open_pidfd(tid);
        if (pidfd < 0)
                return pidfd;
        int sock = (int) syscall(SYS_pidfd_getfd, pidfd, (int) a[0], 0);
        if (sock < 0)
                return errno == EBADF ? -EBADF : negative_errno();
        c->fds[c->n_fds++] = sock;
        struct stat st;
        if (fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode))
                return -ENOTSOCK;

        int r;
        switch (n->data.nr) {
        case SYS_connect:
                c->req.op = SOCKET_OP_CONNECT;
                if (a[2] == 0 || a[2] > sizeof c->req.addr)
                        return -EINVAL;
                r = read_address(tid, a[1], a[2], c);
                break;
        case SYS_sendto: {
                c->req.op = SOCKET_OP_SENDMSG;
                c->req.flags = (int32_t) a[3];
                struct iovec v = { .iov_base = (void *) (uintptr_t) a[1], .iov_len = a[2] };
                r = read_address(tid, a[4], a[5], c);
                if (r >= 0) {
                        int type = 0;
                        socklen_t tl = sizeof type;
                        (void) getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl);
                        size_t take = v.iov_len;
                        if (take > SOCKET_DATA_MAX && type != SOCK_STREAM)
                                return -EMSGSIZE;
                        take = MIN(take, (size_t) SOCKET_DATA_MAX);
                        r = read_job(tid, (uint64_t) (uintptr_t) v.iov_base, c->data, take);
                        c->req.data_len = (uint32_t) take;
                }
                break;
        }
        case SYS_sendmsg:
        case SYS_sendmmsg: {
                c->req.op = SOCKET_OP_SENDMSG;
                struct msghdr mh;
                if (n->data.nr == SYS_sendmmsg) {
                        if (a[2] == 0)
                                return 0; /* nothing to send: the broker sends nothing either */
                        c->mmsg_addr = a[1];
                        c->req.flags = (int32_t) a[3];
                } else
                        c->req.flags = (int32_t) a[2];
                r = read_job(tid, a[1], &mh, sizeof mh);
                if (r >= 0)
                        r = read_address(tid, (uint64_t) (uintptr_t) mh.msg_name, mh.msg_namelen, c);
                if (r >= 0)
                        r = read_data(tid, sock, (uint64_t) (uintptr_t) mh.msg_iov, mh.msg_iovlen, c);
                if (r >= 0)
                        r = read_control(tid, pidfd, (uint64_t) (uintptr_t) mh.msg_control, mh.msg_controllen, c);
                break;
        }
        default:
                return -ENOSYS;
        }
        if (r < 0)
                return r;
        return take_cwd(tid, c);
}

static int send_request(SocketMediator *m, Call *c) {
        struct iovec iov[2] = {
                { .iov_base = &c->req, .iov_len = sizeof c->req },
                { .iov_base = c->data, .iov_len = c->req.data_len },
        };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * (2 + SOCKET_FDS_MAX))];
        } control = {};
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = &control,
                             .msg_controllen = CMSG_SPACE(sizeof(int) * c->n_fds) };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * c->n_fds);
        memcpy(CMSG_DATA(cm), c->fds, sizeof(int) * c->n_fds);
        if (sendmsg(m->channel_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return errno == EAGAIN || errno == ENOBUFS ? -EAGAIN : negative_errno();
        return 0;
}

static void handle_notification(SocketMediator *m) {
        memset(m->notification, 0, m->notification_size);
        struct seccomp_notif *n = m->notification;
        if (ioctl(m->listener_fd, SECCOMP_IOCTL_NOTIF_RECV, n) < 0)
                return; /* EAGAIN; ENOENT: the caller went before we took it */
        if (m->broker_gone)
                return answer(m, n->id, -EACCES);
        if (m->n_pending >= SOCKET_PENDING_MAX)
                return answer(m, n->id, -EAGAIN);

        _cleanup_free_ Call *c = calloc(1, sizeof(Call));
        if (!c)
                return answer(m, n->id, -ENOMEM);
        c->req.cookie = ++m->next_cookie;
        int r = take_call(n, c);
        /* Everything read was read while the call waited: else it is gone,
         * and what was read may be anything. */
        if (!still_pending(m, n->id)) {
                call_done(c);
                return;
        }
        if (r >= 0 && n->data.nr == SYS_sendmmsg && n->data.args[2] == 0)
                r = 0; /* vlen 0: nothing sent */
        else if (r >= 0) {
                r = send_request(m, c);
                if (r >= 0) {
                        m->pending[m->n_pending++] = (SocketPending) {
                                .cookie = c->req.cookie, .id = n->id, .tid = (pid_t) n->pid, .mmsg_addr = c->mmsg_addr };
                        call_done(c);
                        return;
                }
        }
        call_done(c);
        answer(m, n->id, r);
}

/* sendmmsg(): the first message went, with result bytes: its msg_len,
 * and the call's answer 1. */
static int64_t mmsg_answer(const SocketPending *p, int64_t result) {
        if (result < 0)
                return result;
        unsigned len = (unsigned) result;
        struct iovec local = { .iov_base = &len, .iov_len = sizeof len };
        struct iovec remote = { .iov_base = (void *) (uintptr_t) (p->mmsg_addr + offsetof(struct mmsghdr, msg_len)),
                                .iov_len = sizeof len };
        if (process_vm_writev(p->tid, &local, 1, &remote, 1, 0) != (ssize_t) sizeof len)
                return -EFAULT;
        return 1;
}

static void broker_gone(SocketMediator *m) {
        m->broker_gone = true;
        for (size_t i = 0; i < m->n_pending; i++)
                answer(m, m->pending[i].id, -EACCES);
        m->n_pending = 0;
}

static void handle_replies(SocketMediator *m) {
        for (;;) {
                SocketReply reply;
                ssize_t n = recv(m->channel_fd, &reply, sizeof reply, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n != (ssize_t) sizeof reply) {
                        /* The broker is gone (or says what it should not). */
                        if (n != 0)
                                log_warning("Job's socket broker: a reply that is not one; its socket calls fail from now on");
                        return broker_gone(m);
                }
                for (size_t i = 0; i < m->n_pending; i++) {
                        SocketPending *p = &m->pending[i];
                        if (p->cookie != reply.cookie)
                                continue;
                        int64_t result = p->mmsg_addr ? mmsg_answer(p, reply.result) : reply.result;
                        if (still_pending(m, p->id))
                                answer(m, p->id, result);
                        *p = m->pending[--m->n_pending];
                        break;
                }
        }
}

void socket_mediator_dispatch(SocketMediator *m, const struct pollfd p[SOCKET_MEDIATOR_POLLS]) {
        if (p[1].revents)
                handle_replies(m);
        /* A few at a time: a job that floods us leaves the loop its turns. */
        for (unsigned i = 0; p[0].revents & POLLIN && i < 16; i++) {
                struct pollfd q = { .fd = m->listener_fd, .events = POLLIN };
                if (i > 0 && (poll(&q, 1, 0) <= 0 || !(q.revents & POLLIN)))
                        break;
                handle_notification(m);
        }
}

void socket_mediator_done(SocketMediator *m) {
        safe_close(m->channel_fd);
        safe_close(m->child_channel_fd);
        safe_close(m->taken_fd);
        safe_close(m->child_taken_fd);
        safe_close(m->listener_fd);
        free(m->notification);
        *m = SOCKET_MEDIATOR_NULL;
}
