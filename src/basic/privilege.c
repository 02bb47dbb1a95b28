/* SPDX-License-Identifier: MIT */
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "macro.h"
#include "privilege.h"

int user_groups(const char *user, gid_t gid, gid_t **ret, int *ret_n) {
        int n = 64;
        for (int attempt = 0; attempt < 8; attempt++) {
                _cleanup_free_ gid_t *groups = calloc((size_t) n, sizeof(gid_t));
                if (!groups)
                        return -ENOMEM;
                int want = n;
                if (!user || !*user) {
                        groups[0] = gid;
                        *ret = TAKE_PTR(groups);
                        *ret_n = 1;
                        return 0;
                }
                if (getgrouplist(user, gid, groups, &want) >= 0) {
                        *ret = TAKE_PTR(groups);
                        *ret_n = want;
                        return 0;
                }
                if (want <= n) /* failed without telling us how many: give up */
                        return -ENOENT;
                n = want;
        }
        return -E2BIG;
}

/* Runs in the command's child, which shares the supervisor's memory until it
 * execs (clone(CLONE_VM|CLONE_VFORK), exec-child.c): system calls only, on
 * its own stack. No malloc, no libcap (whose cap_t is heap memory), no
 * stdio: a lock or an allocator's state left half-changed in the shared heap
 * would be the supervisor's. (glibc's set*id wrappers are plain system
 * calls in a process of one thread, which the supervisor is.)
 *
 * The capability sets are 64 bits in version 3, so that is the most the
 * kernel can know; a capability it does not know is EINVAL. */
#define CAP_BITS_MAX 64

int drop_privileges(uid_t uid, gid_t gid, const gid_t *groups, int n_groups) {
        /* Not root (bgrund --user): already the job's user, with the groups
         * its session gave it; there is no identity to change and no way to,
         * only capabilities a file may have given to clear. */
        bool as_root = geteuid() == 0;
        if (!as_root && uid != geteuid())
                return -EPERM;

        /* The bounding set can only be shrunk while we still hold CAP_SETPCAP,
         * so it goes first; the uid change last but for the final clear. */
        for (int cap = 0; as_root && cap < CAP_BITS_MAX; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
                        return negative_errno();

        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return negative_errno();
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
                return negative_errno();

        if (as_root && setgroups((size_t) n_groups, groups) < 0)
                return negative_errno();
        if (as_root && setresgid(gid, gid, gid) < 0)
                return negative_errno();
        if (as_root && setresuid(uid, uid, uid) < 0)
                return negative_errno();

        /* For uid 0 the kernel keeps the capabilities across setresuid; clear
         * them explicitly so a root-owned job has none either. The raw
         * system call, as bubblewrap does: effective, permitted and
         * inheritable all zero. */
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
        if (syscall(SYS_capset, &header, data) < 0)
                return negative_errno();

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}
