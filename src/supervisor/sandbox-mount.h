/* SPDX-License-Identifier: MIT */
#pragma once

/* The sandbox's mount primitives, for the child between the fork and the
 * exec (sandbox-apply.h's rule: system calls only, on the stack). Each
 * works on file descriptors, so that a path is looked up once, as the
 * job's user, and what is mounted is what that lookup found. -errno on
 * failure. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* id in decimal into buf (no stdio here). */
const char *decimal_id(char buf[static 12], unsigned id);
/* The lookups' and new files' ids from here on (with fsuid 0 the kernel
 * gives back the file-system capabilities). */
void fs_ids(uid_t uid, gid_t gid);
/* path as the job's user finds it, never through a /proc magic link: an
 * O_PATH descriptor. */
int look_up_path(const char *path);
int stat_fd(int fd, struct statx *ret);
bool same_inode(int a, int b);
/* A copy of the tree at fd, with everything mounted beneath it. */
int copy_tree(int fd);
/* Mount tree on target, or on rel in the tree at dir. */
int attach_tree(int tree, int target);
int attach_at(int tree, int dir, const char *rel);
int set_read_only(int fd, unsigned flags);
/* A new tmpfs, not attached anywhere yet: its root of mode (octal text)
 * and owner, nosuid, nodev and, unless exec, noexec. */
int new_tmpfs(const char *mode, uid_t uid, gid_t gid, bool exec);
void close_all(int *fds, size_t n);

/* An entry as getdents64() gives it (glibc's dirent64 is its own). */
struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};
