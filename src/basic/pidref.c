/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "fileio.h"
#include "macro.h"
#include "pidref.h"

#ifndef PIDFS_MAGIC
#define PIDFS_MAGIC 0x50494446
#endif

#define BOOT_ID_LEN 32
#define PROC_STAT_MAX (16 * 1024)

/* 0: not probed yet, 1: works, -1: the kernel has no pidfd_open(). */
static int pidfd_supported = 0;

static int pidfd_open_checked(pid_t pid, int *ret) {
        int fd;

        if (pidfd_supported < 0)
                return -EOPNOTSUPP;

        fd = pidfd_open(pid, 0);
        if (fd < 0) {
                if (errno == ENOSYS) {
                        pidfd_supported = -1;
                        return -EOPNOTSUPP;
                }
                return negative_errno();
        }

        pidfd_supported = 1;
        *ret = fd;
        return 0;
}

/* Signal 0 tells whether the process still exists; EPERM means it does, we
 * just may not signal it. */
static int pidfd_is_alive(int fd) {
        if (pidfd_send_signal(fd, 0, NULL, 0) >= 0)
                return 1;
        if (errno == EPERM)
                return 1;
        if (errno == ESRCH)
                return 0;
        return negative_errno();
}

static int read_boot_id(char ret[static BOOT_ID_LEN + 1]) {
        /* The boot id cannot change under a running process. */
        static char cached[BOOT_ID_LEN + 1];
        _cleanup_free_ char *s = NULL;
        char id[BOOT_ID_LEN + 1];
        size_t n = 0;
        int r;

        if (cached[0]) {
                memcpy(ret, cached, sizeof(cached));
                return 0;
        }

        r = read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", 128, &s, NULL);
        if (r < 0)
                return r;

        for (const char *p = s; *p && *p != '\n'; p++) {
                if (*p == '-')
                        continue;
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return -EBADMSG;
                if (n >= BOOT_ID_LEN)
                        return -EBADMSG;
                id[n++] = *p;
        }
        if (n != BOOT_ID_LEN)
                return -EBADMSG;
        id[n] = '\0';

        memcpy(cached, id, sizeof(id));
        memcpy(ret, id, sizeof(id));
        return 0;
}

static int read_starttime(pid_t pid, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        char path[64];
        const char *p;
        char *end;
        uint64_t v;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        r = read_file_at(AT_FDCWD, path, PROC_STAT_MAX, &s, NULL);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;

        /* comm is free-form ("a) b" is a valid name), so the fields only
         * start after the last ')'. */
        p = strrchr(s, ')');
        if (!p)
                return -EBADMSG;
        p++;

        /* After ')' come fields 3 (state) … 21; starttime is field 22. */
        for (unsigned field = 3; field < 22; field++) {
                p += strspn(p, " ");
                p += strcspn(p, " ");
                if (*p == '\0')
                        return -EBADMSG;
        }
        p += strspn(p, " ");
        if (*p < '0' || *p > '9')
                return -EBADMSG;

        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno != 0 || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -EBADMSG;

        *ret = v;
        return 0;
}

int process_start_token(pid_t pid, int pidfd, char *buf, size_t len) {
        char boot_id[BOOT_ID_LEN + 1];
        uint64_t starttime;
        int r, n;

        if (pid <= 0 || !buf)
                return -EINVAL;

        r = read_boot_id(boot_id);
        if (r < 0)
                return r;

        r = read_starttime(pid, &starttime);
        if (r < 0)
                return r;

        if (pidfd >= 0) {
                struct statfs sfs;
                struct stat st;

                if (fstatfs(pidfd, &sfs) < 0)
                        return negative_errno();

                /* Before pidfs (Linux 6.9) a pidfd is an anon inode shared
                 * by all of them; only a pidfs inode names one process. */
                if ((uint64_t) sfs.f_type == PIDFS_MAGIC) {
                        if (fstat(pidfd, &st) < 0)
                                return negative_errno();

                        n = snprintf(buf, len, "%s-%" PRIu64 "-%" PRIu64,
                                     boot_id, starttime, (uint64_t) st.st_ino);
                        goto done;
                }
        }

        n = snprintf(buf, len, "%s-%" PRIu64, boot_id, starttime);
done:
        if (n < 0 || (size_t) n >= len)
                return -ENOBUFS;
        return 0;
}

/* Open a pidfd for pid and read its token. /proc is read by pid, not
 * through the pidfd, so the pidfd is checked alive afterwards: had the
 * process died, the pid might have been reused in between and the token
 * might describe a stranger. -ESRCH when the process is gone. */
static int pidfd_open_with_token(pid_t pid, int *ret_fd, char token[static PIDREF_TOKEN_MAX]) {
        _cleanup_close_ int fd = -EBADF;
        int r = pidfd_open_checked(pid, &fd);
        if (r < 0)
                return r;
        r = process_start_token(pid, fd, token, PIDREF_TOKEN_MAX);
        if (r < 0)
                return r;
        r = pidfd_is_alive(fd);
        if (r < 0)
                return r;
        if (r == 0)
                return -ESRCH;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static void pidref_fill(PidRef *ref, pid_t pid, int fd, const char token[static PIDREF_TOKEN_MAX]) {
        ref->pid = pid;
        ref->fd = fd;
        memcpy(ref->token, token, PIDREF_TOKEN_MAX);
}

int pidref_set_pid(PidRef *ref, pid_t pid) {
        _cleanup_close_ int fd = -EBADF;
        char token[PIDREF_TOKEN_MAX];

        if (!ref || pid <= 0)
                return -EINVAL;
        int r = pidfd_open_with_token(pid, &fd, token);
        if (r < 0)
                return r;
        pidref_fill(ref, pid, TAKE_FD(fd), token);
        return 0;
}

int pidref_verify(pid_t pid, const char *expected_token, PidRef *ret) {
        _cleanup_close_ int fd = -EBADF;
        char token[PIDREF_TOKEN_MAX];

        if (pid <= 0 || !expected_token)
                return -EINVAL;
        int r = pidfd_open_with_token(pid, &fd, token);
        if (r == -ESRCH)
                return PIDREF_GONE;
        if (r < 0)
                return r;
        if (!pidref_tokens_match(token, expected_token))
                return PIDREF_FOREIGN;
        if (ret)
                pidref_fill(ret, pid, TAKE_FD(fd), token);
        return PIDREF_OWNED;
}

int pidref_check(const PidRef *ref) {
        struct pollfd p;
        int r;

        if (!ref || ref->fd < 0)
                return -EBADF;

        /* A pidfd polls readable once the process has exited, zombie or
         * not; a signal 0 would still succeed on an unreaped zombie. */
        p = (struct pollfd) { .fd = ref->fd, .events = POLLIN };
        r = poll(&p, 1, 0);
        if (r < 0)
                return negative_errno();
        if (r > 0 && (p.revents & (POLLIN | POLLHUP)))
                return PIDREF_GONE;

        r = pidfd_is_alive(ref->fd);
        if (r < 0)
                return r;
        return r > 0 ? PIDREF_OWNED : PIDREF_GONE;
}

int pidref_kill(const PidRef *ref, int sig) {
        if (!ref || ref->fd < 0)
                return -EBADF;

        if (pidfd_send_signal(ref->fd, sig, NULL, 0) < 0)
                return negative_errno();
        return 0;
}

void pidref_done(PidRef *ref) {
        if (!ref)
                return;

        safe_close(ref->fd);
        *ref = PIDREF_NULL;
}

typedef struct Token {
        char boot_id[BOOT_ID_LEN + 1];
        uint64_t starttime;
        uint64_t inode;
        bool has_inode;
} Token;

static bool parse_u64(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned d;

                if (s[i] < '0' || s[i] > '9')
                        return false;
                d = (unsigned) (s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static bool token_parse(const char *s, Token *ret) {
        const char *p, *dash;

        if (!s || strnlen(s, PIDREF_TOKEN_MAX) >= PIDREF_TOKEN_MAX)
                return false;

        for (size_t i = 0; i < BOOT_ID_LEN; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        if (s[BOOT_ID_LEN] != '-')
                return false;
        memcpy(ret->boot_id, s, BOOT_ID_LEN);
        ret->boot_id[BOOT_ID_LEN] = '\0';

        p = s + BOOT_ID_LEN + 1;
        dash = strchr(p, '-');
        if (!parse_u64(p, dash ? (size_t) (dash - p) : strlen(p), &ret->starttime))
                return false;

        ret->has_inode = dash;
        if (dash && !parse_u64(dash + 1, strlen(dash + 1), &ret->inode))
                return false;

        return true;
}

bool pidref_tokens_match(const char *a, const char *b) {
        Token x, y;

        if (!token_parse(a, &x) || !token_parse(b, &y))
                return false;

        if (!streq(x.boot_id, y.boot_id) || x.starttime != y.starttime)
                return false;

        /* Starttime has only clock-tick resolution; where both sides saw a
         * pidfs inode, that settles it. */
        if (x.has_inode && y.has_inode && x.inode != y.inode)
                return false;

        return true;
}

int pidfd_get_pid(int pidfd, pid_t *ret) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
        _cleanup_free_ char *info = NULL;
        int r = read_file_at(AT_FDCWD, path, 4096, &info, NULL);
        if (r < 0)
                return r;
        const char *p = strstr(info, "\nPid:\t");
        long pid = p ? strtol(p + strlen("\nPid:\t"), NULL, 10) : 0;
        /* -1: it exited; 0: it is in no namespace of ours. */
        if (pid <= 0)
                return pid < 0 ? -ESRCH : -ENOENT;
        *ret = (pid_t) pid;
        return 0;
}
