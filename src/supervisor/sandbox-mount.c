/* SPDX-License-Identifier: MIT */
/* The sandbox's mount primitives (sandbox-mount.h): the new mount API
 * (open_tree, move_mount, mount_setattr, fsmount), each call on a file
 * descriptor. */
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "macro.h"
#include "sandbox-mount.h"

const char *decimal_id(char buf[static 12], unsigned id) {
        char *p = buf + 11;
        *p = '\0';
        do
                *--p = (char) ('0' + id % 10);
        while ((id /= 10) > 0);
        return p;
}

void fs_ids(uid_t uid, gid_t gid) {
        (void) setfsgid(gid);
        (void) setfsuid(uid);
}

int look_up_path(const char *path) {
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
        long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
        return fd < 0 ? negative_errno() : (int) fd;
}

int stat_fd(int fd, struct statx *ret) {
        return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, ret) < 0 ? negative_errno() : 0;
}

bool same_inode(int a, int b) {
        struct statx x, y;
        return stat_fd(a, &x) >= 0 && stat_fd(b, &y) >= 0 && x.stx_ino == y.stx_ino &&
               x.stx_dev_major == y.stx_dev_major && x.stx_dev_minor == y.stx_dev_minor;
}

int copy_tree(int fd) {
        int t = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
        return t < 0 ? negative_errno() : t;
}

int attach_tree(int tree, int target) {
        return move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? negative_errno() : 0;
}

int set_read_only(int fd, unsigned flags) {
        struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
        return mount_setattr(fd, "", AT_EMPTY_PATH | flags, &a, sizeof a) < 0 ? negative_errno() : 0;
}

int new_tmpfs(const char *mode, uid_t uid, gid_t gid, bool exec) {
        char u[12], g[12];
        int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return negative_errno();
        int r = -EBADF;
        if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) >= 0 &&
            fsconfig(fs, FSCONFIG_SET_STRING, "uid", decimal_id(u, uid), 0) >= 0 &&
            fsconfig(fs, FSCONFIG_SET_STRING, "gid", decimal_id(g, gid), 0) >= 0 &&
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) >= 0)
                r = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (exec ? 0 : MOUNT_ATTR_NOEXEC));
        if (r < 0)
                r = negative_errno();
        close(fs);
        return r;
}

void close_all(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

int attach_at(int tree, int dir, const char *rel) {
        int target = openat(dir, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (target < 0)
                return negative_errno();
        int r = attach_tree(tree, target);
        close(target);
        return r;
}

