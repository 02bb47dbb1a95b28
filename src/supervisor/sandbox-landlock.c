/* SPDX-License-Identifier: MIT */
/* The sandbox's Landlock domains (sandbox-landlock.h). */
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#include "macro.h"
#include "sandbox-landlock.h"
#include "sandbox-mount.h"

/* What the system's headers may predate: ABI 5's device ioctls, ABI 6's scoping. */
#define ACCESS_FS_WRITE_FILE (UINT64_C(1) << 1)
#define ACCESS_FS_IOCTL_DEV (UINT64_C(1) << 15)
#define SCOPE_ABSTRACT_UNIX_SOCKET (UINT64_C(1) << 0)
#define SCOPE_SIGNAL (UINT64_C(1) << 1)
struct ruleset_attr {
        uint64_t handled_access_fs, handled_access_net, scoped;
};
struct path_beneath_attr {
        uint64_t allowed_access;
        int32_t parent_fd;
} __attribute__((packed));

#define WRITES (ACCESS_FS_WRITE_FILE | ACCESS_FS_IOCTL_DEV)

static int abi(void) {
        long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (v < 0)
                return errno == ENOSYS || errno == EOPNOTSUPP ? -EOPNOTSUPP : negative_errno();
        return v < 6 ? -EOPNOTSUPP : (int) v;
}

static int restrict_self(int ruleset) {
        int r = syscall(SYS_landlock_restrict_self, ruleset, 0) < 0 ? negative_errno() : 0;
        close(ruleset);
        return r;
}

int landlock_scope_domain(void) {
        int r = abi();
        if (r < 0)
                return r;
        struct ruleset_attr a = { .scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL };
        long fd = syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0);
        if (fd < 0)
                return negative_errno();
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                close((int) fd);
                return negative_errno();
        }
        return restrict_self((int) fd);
}

/* Writes allowed beneath fd (a file: on it). */
static int allow_fd(int ruleset, int fd) {
        struct statx st;
        int r = stat_fd(fd, &st);
        if (r < 0)
                return r;
        struct path_beneath_attr a = { .allowed_access = WRITES, .parent_fd = fd };
        /* Only a device among the files takes ioctls worth granting; a
         * FIFO or a socket, neither right applies to but writing. */
        if (!S_ISDIR(st.stx_mode) && !S_ISCHR(st.stx_mode) && !S_ISBLK(st.stx_mode))
                a.allowed_access = ACCESS_FS_WRITE_FILE;
        return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &a, 0) < 0 ? negative_errno() : 0;
}

/* Writes allowed beneath path, if the job's user finds it. */
static int allow_path(int ruleset, const char *path) {
        int fd = look_up_path(path);
        if (fd < 0)
                return 0;
        int r = allow_fd(ruleset, fd);
        close(fd);
        return r;
}

static bool below(const char *path, const char *parent) {
        if (streq(parent, "/"))
                return path[0] == '/' && path[1] != '\0';
        size_t n = strlen(parent);
        return strncmp(path, parent, n) == 0 && path[n] == '/';
}

/* The plan's read-only path at exactly path, or one strictly below it. */
static bool read_only_at(const SandboxPlan *p, const char *path) {
        for (size_t i = 0; i < p->n_mounts; i++)
                if (p->mounts[i].mode == SANDBOX_READ_ONLY && streq(p->mounts[i].path, path))
                        return true;
        return false;
}

static bool read_only_below(const SandboxPlan *p, const char *path) {
        for (size_t i = 0; i < p->n_mounts; i++)
                if (p->mounts[i].mode == SANDBOX_READ_ONLY && below(p->mounts[i].path, path))
                        return true;
        return false;
}


/* The writable part of the tree at path (its length len in buf, which
 * holds PATH_MAX), where the file system is writable but for the plan's
 * read-only paths: one rule for a subtree with none of them, else one a
 * child, down to them. A file made later directly in such a directory is
 * not covered: refused, not allowed. /dev has its own rules, /proc no
 * FIFOs (and is allowed whole), /sys is read-only. */
static int allow_region(int ruleset, const SandboxPlan *p, char *buf, size_t len, unsigned depth) {
        if (streq(buf, "/dev") || streq(buf, "/sys"))
                return 0;
        if (streq(buf, "/proc") || !read_only_below(p, buf))
                return read_only_at(p, buf) ? 0 : allow_path(ruleset, buf);
        if (depth > 32)
                return 0;
        int dir = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return 0;
        char entries[2048];
        int r = 0;
        for (;;) {
                long n = syscall(SYS_getdents64, dir, entries, sizeof entries);
                if (n <= 0) {
                        r = n < 0 ? negative_errno() : 0;
                        break;
                }
                for (long off = 0; off < n && r >= 0;) {
                        const struct linux_dirent64 *d = (const struct linux_dirent64 *) (entries + off);
                        off += d->d_reclen;
                        if (streq(d->d_name, ".") || streq(d->d_name, ".."))
                                continue;
                        size_t k = strlen(d->d_name), at = len == 1 ? 1 : len + 1;
                        if (at + k >= 4096)
                                continue;
                        if (len > 1)
                                buf[len] = '/';
                        memcpy(buf + at, d->d_name, k + 1);
                        if (!read_only_at(p, buf))
                                r = allow_region(ruleset, p, buf, at + k, depth + 1);
                        buf[at - (len > 1)] = '\0';
                }
                if (r < 0)
                        break;
        }
        close(dir);
        return r;
}

int landlock_job_domain(const SandboxPlan *plan, const SandboxWritable *writable) {
        int r = abi();
        if (r < 0)
                return r;
        struct ruleset_attr a = { .handled_access_fs = WRITES, .scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL };
        long fd = syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0);
        if (fd < 0)
                return negative_errno();
        int ruleset = (int) fd;
        for (size_t i = 0; r >= 0 && i < writable->n; i++)
                r = allow_fd(ruleset, writable->fds[i]);
        static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                                               "/dev/tty", "/dev/pts", "/proc" };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(devices); i++)
                r = allow_path(ruleset, devices[i]);
        for (size_t i = 0; r >= 0 && plan && i < plan->n_mounts; i++)
                if (plan->mounts[i].in_dev && plan->mounts[i].mode == SANDBOX_READ_WRITE)
                        r = allow_path(ruleset, plan->mounts[i].path);
        /* Without ProtectSystem=strict, the file system is writable but
         * where the plan says otherwise. */
        if (r >= 0 && plan && !read_only_at(plan, "/")) {
                char buf[4096] = "/";
                r = allow_region(ruleset, plan, buf, 1, 0);
        }
        if (r < 0) {
                close(ruleset);
                return r;
        }
        return restrict_self(ruleset);
}
