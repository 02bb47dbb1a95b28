/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

_Static_assert(CGROUP_EVENTS_WATCH_EVENTS == POLLPRI && CGROUP_EVENTS_WATCH_EVENTS == EPOLLPRI,
               "one value for poll() and epoll");

int cgroup2_root(const char **ret) {
        static const char *cached = NULL;
        static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

        if (!cached)
                for (size_t i = 0; i < ELEMENTSOF(candidates); i++) {
                        struct statfs fs;
                        if (statfs(candidates[i], &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
                                cached = candidates[i];
                                break;
                        }
                }
        if (!cached)
                return -ENOMEDIUM;
        *ret = cached;
        return 0;
}

int cgroup_path_of_pid(pid_t pid, char **ret) {
        char path[64];
        if (pid == 0)
                snprintf(path, sizeof path, "/proc/self/cgroup");
        else
                snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);

        _cleanup_free_ char *content = NULL;
        int r = read_file_at(AT_FDCWD, path, 64 * 1024, &content, NULL);
        if (r < 0)
                return r;

        /* The v2 entry is the one with hierarchy id 0 and no controllers. */
        for (char *line = content, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (startswith_s(line, "0::")) {
                        char *p = strdup(line + 3);
                        if (!p)
                                return -ENOMEM;
                        *ret = p;
                        return 0;
                }
        }
        return -ENOMEDIUM;
}

int cgroup_open(const char *path, int *ret_fd) {
        const char *root;
        int r = cgroup2_root(&root);
        if (r < 0)
                return r;
        if (path[0] != '/' || strstr(path, "/../") || (strlen(path) >= 3 && streq(path + strlen(path) - 3, "/..")))
                return -EINVAL;

        char full[4096];
        if ((size_t) snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full)
                return -ENAMETOOLONG;
        int fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int cgroup_create_child(int parent_fd, const char *name, int *ret_fd) {
        if (mkdirat(parent_fd, name, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int cgroup_write_attribute(int cgroup_fd, const char *name, const char *value) {
        _cleanup_close_ int fd = openat(cgroup_fd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        size_t len = strlen(value);
        ssize_t n = write(fd, value, len);
        if (n < 0)
                return negative_errno();
        return (size_t) n == len ? 0 : -EIO;
}

int cgroup_attach(int cgroup_fd, pid_t pid) {
        /* Formatted by hand: the supervisor's exec child calls this while it
         * shares the supervisor's memory, where stdio has no place. */
        if (pid < 0)
                return -EINVAL;
        char buf[32], *p = buf + sizeof buf;
        unsigned v = (unsigned) pid;
        *--p = '\0';
        do
                *--p = (char) ('0' + v % 10);
        while (v /= 10);
        return cgroup_write_attribute(cgroup_fd, "cgroup.procs", p);
}

/* Every v2 cgroup has cgroup.procs; once the directory is removed, lookups
 * in it fail with ENOENT. */
static bool cgroup_is_removed(int cgroup_fd) {
        struct stat st;
        return fstatat(cgroup_fd, "cgroup.procs", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int cgroup_kill(int cgroup_fd) {
        int r = cgroup_write_attribute(cgroup_fd, "cgroup.kill", "1");
        if (r == -ENOENT)
                return cgroup_is_removed(cgroup_fd) ? 0 : -EOPNOTSUPP;
        return r;
}

/* "populated 1" or "populated 0" in cgroup.events' text. */
static int parse_populated(int fd) {
        char buf[256];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        const char *p = strstr(buf, "populated ");
        if (!p)
                return -EBADMSG;
        return p[strlen("populated ")] == '1';
}

int cgroup_is_populated(int cgroup_fd) {
        /* read_file_at wants regular files; cgroupfs files are, with size 0,
         * so read directly. */
        _cleanup_close_ int fd = openat(cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        /* The kernel refuses to remove a populated cgroup, so one that is
         * gone (systemd collects a unit's cgroup as soon as it empties) is
         * empty. */
        if (fd < 0 && errno == ENOENT && cgroup_is_removed(cgroup_fd))
                return 0;
        if (fd < 0)
                return negative_errno();
        return parse_populated(fd);
}

int cgroup_events_watch(int cgroup_fd, int *ret_watch_fd) {
        _cleanup_close_ int fd = openat(cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        /* Armed by the open; read once all the same, as every re-arm is. */
        int r = parse_populated(fd);
        if (r < 0)
                return r;
        *ret_watch_fd = TAKE_FD(fd);
        return 0;
}

int cgroup_events_watch_populated(int watch_fd) {
        int r = parse_populated(watch_fd);
        /* The cgroup was removed under the open file: it was empty then. */
        return r == -ENODEV || r == -ENOENT ? 0 : r;
}

int cgroup_wait_empty(int cgroup_fd, uint64_t timeout_usec) {
        int r = cgroup_is_populated(cgroup_fd);
        if (r <= 0)
                return r;
        _cleanup_close_ int wfd = -EBADF;
        r = cgroup_events_watch(cgroup_fd, &wfd);
        if (r == -ENOENT && cgroup_is_populated(cgroup_fd) == 0)
                return 0; /* removed already, so empty */
        if (r < 0)
                return r;

        /* The kernel rate-limits cgroup.events notifications (one per ~10 ms,
         * the rest deferred by a timer), so besides the watch the file is
         * re-read after short, growing pauses: a few wakeups, not a busy
         * loop, and no waiting on a deferred notification. */
        uint64_t step_ms = 1;
        uint64_t start = now_monotonic_usec();
        for (;;) {
                /* Read after the watch exists, so no change can slip between. */
                r = cgroup_events_watch_populated(wfd);
                if (r <= 0)
                        return r;

                uint64_t elapsed = now_monotonic_usec() - start;
                if (elapsed >= timeout_usec)
                        return -ETIMEDOUT;
                uint64_t left_ms = (timeout_usec - elapsed + 999) / 1000;
                uint64_t wait_ms = left_ms < step_ms ? left_ms : step_ms;
                if (step_ms < 64)
                        step_ms *= 2;

                struct pollfd p = { .fd = wfd, .events = CGROUP_EVENTS_WATCH_EVENTS };
                if (poll(&p, 1, (int) wait_ms) < 0 && errno != EINTR)
                        return negative_errno();
        }
}

int cgroup_read_attribute(int cgroup_fd, const char *name, char **ret) {
        _cleanup_close_ int fd = openat(cgroup_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        char buf[512];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        char *s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* The longest line of cgroup.procs: a pid (pid_max is at most 2^22, seven
 * digits) and its newline. */
#define PROCS_LINE_MAX 8

int cgroup_read_pids(int cgroup_fd, size_t max, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(cgroup_fd, "cgroup.procs", max * PROCS_LINE_MAX, &text, NULL);
        if (r == -EFBIG)
                return -E2BIG;
        if (r < 0)
                return r;
        size_t lines = 0;
        for (const char *p = text; (p = strchr(p, '\n')); p++)
                lines++;
        if (lines > max)
                return -E2BIG;
        _cleanup_free_ pid_t *pids = lines > 0 ? calloc(lines, sizeof(pid_t)) : NULL;
        if (lines > 0 && !pids)
                return -ENOMEM;
        size_t n = 0;
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                /* Every line ends in a newline: one without is the last, and
                 * no pid the kernel wrote. */
                if (n == lines || parse_pid(line, &pids[n]) < 0)
                        return -EBADMSG;
                n++;
        }
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

int cgroup_read_controllers(int cgroup_fd, char **ret) {
        return cgroup_read_attribute(cgroup_fd, "cgroup.controllers", ret);
}

bool cgroup_has_controller(const char *controllers, const char *name) {
        size_t len = strlen(name);
        for (const char *p = controllers; (p = strstr(p, name)); p += len)
                if ((p == controllers || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' '))
                        return true;
        return false;
}
