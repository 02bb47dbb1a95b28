/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/sched.h>

#include "macro.h"
#include "socket-broker.h"
#include "socket-protocol.h"
#include "time-util.h"

/* --- in the command's child ----------------------------------------------- */

int socket_broker_spawn(int channel, const char *mount_ids) {
        /* A sibling of the command: its parent is the supervisor. */
        long pid = syscall(SYS_clone, CLONE_PARENT, 0, NULL, NULL, 0);
        if (pid < 0)
                return negative_errno();
        if (pid > 0)
                return (int) pid;
        (void) setsid(); /* no job-control signal of the job's terminal reaches it */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || dup2(channel, 3) < 0)
                _exit(127);
        (void) syscall(SYS_close_range, 4U, ~0U, 0U);
        char fd_arg[] = "3";
        char *argv[] = { (char *) "bgrun-supervisor", (char *) "--socket-broker", fd_arg, (char *) mount_ids, NULL };
        char *envp[] = { NULL };
        execve("/proc/self/exe", argv, envp);
        _exit(127);
}

/* --- the broker ------------------------------------------------------------ */

/* The job's writable mounts, by id. */
static uint64_t *writable;
static size_t n_writable;

static bool is_writable(uint64_t id) {
        for (size_t i = 0; i < n_writable; i++)
                if (writable[i] == id)
                        return true;
        return false;
}

/* ids (the writable paths' own mounts), and every writable mount below
 * one of them (/proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTIONS ..."). */
static int load_writable(const char *ids) {
        size_t max = 1024;
        writable = calloc(max, sizeof(uint64_t));
        if (!writable)
                return -ENOMEM;
        for (const char *p = ids; *p && n_writable < max;) {
                char *end;
                unsigned long long v = strtoull(p, &end, 10);
                if (end == p)
                        return -EINVAL;
                writable[n_writable++] = v;
                p = *end == ',' ? end + 1 : end;
        }
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return -errno;
        typedef struct { uint64_t id, parent; bool rw; } Mount;
        Mount *mounts = NULL;
        size_t n = 0, cap = 0;
        char *line = NULL;
        size_t len = 0;
        while (getline(&line, &len, f) > 0) {
                unsigned long long id, parent;
                char options[256];
                if (sscanf(line, "%llu %llu %*s %*s %*s %255s", &id, &parent, options) != 3)
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 64;
                        Mount *m = realloc(mounts, cap * sizeof *m);
                        if (!m)
                                break;
                        mounts = m;
                }
                mounts[n++] = (Mount) { id, parent, strncmp(options, "rw", 2) == 0 && (options[2] == ',' || !options[2]) };
        }
        free(line);
        fclose(f);
        /* Below a writable mount, a writable one is writable: until nothing changes. */
        for (bool grown = true; grown;) {
                grown = false;
                for (size_t i = 0; i < n && n_writable < max; i++)
                        if (mounts[i].rw && !is_writable(mounts[i].id) && is_writable(mounts[i].parent)) {
                                writable[n_writable++] = mounts[i].id;
                                grown = true;
                        }
        }
        free(mounts);
        return 0;
}

typedef enum CallState { CALL_RESOLVING, CALL_MAKING, CALL_ABANDONED } CallState;

typedef struct Call {
        SocketRequest req;
        unsigned char *data;
        int fds[2 + SOCKET_FDS_MAX];
        size_t n_fds;
        CallState state;
        uint64_t started;
} Call;

static int channel = 3;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Call *calls[SOCKET_BROKER_THREADS_MAX];

static void reply(uint64_t cookie, int64_t result) {
        SocketReply r = { .cookie = cookie, .result = result };
        (void) send(channel, &r, sizeof r, MSG_NOSIGNAL);
}

static void call_free(Call *c) {
        for (size_t i = 0; i < c->n_fds; i++)
                safe_close(c->fds[i]);
        free(c->data);
        free(c);
}

/* The address a pathname socket's call goes to: the inode it resolves to,
 * if it lies on a writable mount, through /proc/self/fd. *ret_pinned
 * holds it open meanwhile. */
static int resolve(Call *c, int *ret_pinned) {
        struct sockaddr_un *sa = (struct sockaddr_un *) &c->req.addr;
        size_t off = offsetof(struct sockaddr_un, sun_path);
        if (c->req.addr_len <= off || sa->sun_family != AF_UNIX || sa->sun_path[0] == '\0')
                return 0; /* not a path: abstract (Landlock's scope), unnamed, or another family */
        char path[sizeof sa->sun_path + 1];
        size_t n = strnlen(sa->sun_path, MIN(c->req.addr_len - off, sizeof sa->sun_path));
        memcpy(path, sa->sun_path, n);
        path[n] = '\0';
        int dir = AT_FDCWD;
        if (path[0] != '/') {
                if (!c->req.has_cwd)
                        return -EINVAL;
                dir = c->fds[1];
        }
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
        int fd = (int) syscall(SYS_openat2, dir, path, &how, sizeof how);
        if (fd < 0)
                return -errno;
        struct statx st;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &st) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        /* No socket (a file, a directory): reached through /proc/self/fd
         * all the same, the kernel refuses it with its own words. */
        if (S_ISSOCK(st.stx_mode) && (!(st.stx_mask & STATX_MNT_ID) || !is_writable(st.stx_mnt_id))) {
                close(fd);
                return -EACCES;
        }
        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d", fd);
        c->req.addr_len = (uint32_t) (off + strlen(sa->sun_path) + 1);
        *ret_pinned = fd;
        return 0;
}

static int64_t make(Call *c) {
        int sock = c->fds[0];
        const struct sockaddr *addr = c->req.addr_len ? (const struct sockaddr *) &c->req.addr : NULL;
        if (c->req.op == SOCKET_OP_CONNECT)
                return connect(sock, addr, c->req.addr_len) < 0 ? -errno : 0;
        if (c->req.op != SOCKET_OP_SENDMSG)
                return -ENOSYS;
        /* The descriptors it passes, then its other control messages. */
        size_t passed = c->n_fds - 1 - c->req.has_cwd;
        size_t rights = passed ? CMSG_SPACE(passed * sizeof(int)) : 0;
        size_t control_len = rights + c->req.control_len;
        _cleanup_free_ unsigned char *control = control_len ? calloc(1, control_len) : NULL;
        if (control_len && !control)
                return -ENOMEM;
        if (rights) {
                struct cmsghdr *cm = (struct cmsghdr *) control;
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(passed * sizeof(int));
                memcpy(CMSG_DATA(cm), c->fds + 1 + c->req.has_cwd, passed * sizeof(int));
        }
        if (c->req.control_len)
                memcpy(control + rights, c->req.control, c->req.control_len);
        struct iovec iov = { .iov_base = c->data, .iov_len = c->req.data_len };
        struct msghdr mh = {
                .msg_name = (void *) addr, .msg_namelen = c->req.addr_len,
                .msg_iov = &iov, .msg_iovlen = 1,
                .msg_control = control, .msg_controllen = control_len,
        };
        ssize_t n = sendmsg(sock, &mh, c->req.flags | MSG_NOSIGNAL);
        return n < 0 ? -errno : n;
}

/* Whether c is still ours to answer (not given up by the loop). */
static bool proceed(Call *c, CallState next) {
        pthread_mutex_lock(&lock);
        bool ours = c->state != CALL_ABANDONED;
        if (ours)
                c->state = next;
        pthread_mutex_unlock(&lock);
        return ours;
}

static void forget(Call *c) {
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < SOCKET_BROKER_THREADS_MAX; i++)
                if (calls[i] == c)
                        calls[i] = NULL;
        pthread_mutex_unlock(&lock);
        call_free(c);
}

static void *serve(void *userdata) {
        Call *c = userdata;
        int pinned = -EBADF;
        int64_t r = resolve(c, &pinned);
        if (proceed(c, CALL_MAKING)) {
                if (r >= 0)
                        r = make(c);
                reply(c->req.cookie, r);
        }
        safe_close(pinned);
        forget(c);
        return NULL;
}

/* A call whose path did not resolve in time fails; its thread, once the
 * path answers, makes nothing. */
static void abandon_late(void) {
        uint64_t now = now_monotonic_usec();
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < SOCKET_BROKER_THREADS_MAX; i++) {
                Call *c = calls[i];
                if (c && c->state == CALL_RESOLVING && now - c->started > SOCKET_RESOLVE_TIMEOUT_USEC) {
                        c->state = CALL_ABANDONED;
                        reply(c->req.cookie, -ETIMEDOUT);
                }
        }
        pthread_mutex_unlock(&lock);
}

/* One request off the channel: 1, 0 at its end, -errno. */
static int receive(Call **ret) {
        _cleanup_free_ Call *c = calloc(1, sizeof(Call));
        _cleanup_free_ unsigned char *data = malloc(SOCKET_DATA_MAX);
        if (!c || !data)
                return -ENOMEM;
        struct iovec iov[2] = {
                { .iov_base = &c->req, .iov_len = sizeof c->req },
                { .iov_base = data, .iov_len = SOCKET_DATA_MAX },
        };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * (2 + SOCKET_FDS_MAX))];
        } control = {};
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = &control, .msg_controllen = sizeof control.buf };
        ssize_t n = recvmsg(channel, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? -EAGAIN : -errno;
        if (n == 0)
                return 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k && c->n_fds < ELEMENTSOF(c->fds); i++)
                                memcpy(&c->fds[c->n_fds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                }
        bool whole = (size_t) n >= sizeof c->req && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
                     c->req.data_len == (size_t) n - sizeof c->req && c->req.control_len <= SOCKET_CONTROL_MAX &&
                     c->req.addr_len <= sizeof c->req.addr && c->n_fds == 1 + c->req.has_cwd + c->req.n_fds;
        if (!whole) {
                for (size_t i = 0; i < c->n_fds; i++)
                        safe_close(c->fds[i]);
                return -EBADMSG;
        }
        c->data = TAKE_PTR(data);
        c->state = CALL_RESOLVING;
        c->started = now_monotonic_usec();
        *ret = TAKE_PTR(c);
        return 1;
}

/* Start c in a thread of its own, if there is room for one. */
static void start(Call *c) {
        pthread_mutex_lock(&lock);
        size_t slot = SOCKET_BROKER_THREADS_MAX;
        for (size_t i = 0; i < SOCKET_BROKER_THREADS_MAX && slot == SOCKET_BROKER_THREADS_MAX; i++)
                if (!calls[i])
                        slot = i;
        if (slot < SOCKET_BROKER_THREADS_MAX)
                calls[slot] = c;
        pthread_mutex_unlock(&lock);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        if (slot == SOCKET_BROKER_THREADS_MAX || pthread_create(&t, &attr, serve, c) != 0) {
                reply(c->req.cookie, -EAGAIN);
                if (slot < SOCKET_BROKER_THREADS_MAX)
                        forget(c);
                else
                        call_free(c);
        }
        pthread_attr_destroy(&attr);
}

int socket_broker_main(int argc, char **argv) {
        if (argc != 2 || strcmp(argv[0], "3") != 0)
                return -EINVAL;
        /* A Stop's signal (any) is for the job, whose calls are still made
         * during its grace; it ends when the supervisor's end closes, or
         * with the supervisor (PR_SET_PDEATHSIG), or with the whole job's
         * cgroup (bgrund's cgroup.kill). */
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) signal(sig, SIG_IGN);
        (void) prctl(PR_SET_NAME, "bgrun-sockets");
        int r = load_writable(argv[1]);
        if (r < 0)
                return r;
        for (;;) {
                struct pollfd p = { .fd = channel, .events = POLLIN };
                int k = poll(&p, 1, 1000);
                abandon_late();
                if (k <= 0)
                        continue;
                Call *c = NULL;
                r = receive(&c);
                if (r == 0)
                        return 0; /* the supervisor is done */
                if (r == -EAGAIN || r == -EBADMSG)
                        continue;
                if (r < 0)
                        return r;
                start(c);
        }
}
