/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "confine.h"
#include "macro.h"
#include "seccomp-arch.h"

/* Every write, make, remove and exec right Landlock has (ABI 1, and
 * TRUNCATE from ABI 3 where there), with no rule granting any. */
static int no_file_writes(void) {
        struct landlock_ruleset_attr attr = {
                .handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                     LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                                     LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                                     LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                                     LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                                     LANDLOCK_ACCESS_FS_MAKE_SYM,
        };
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0)
                return negative_errno();
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
        if (abi >= 3)
                attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
        int fd = (int) syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
        if (fd < 0)
                return negative_errno();
        int r = syscall(SYS_landlock_restrict_self, fd, 0) < 0 ? negative_errno() : 0;
        close(fd);
        return r;
}

static int no_exec(void) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH_NATIVE, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SECCOMP_X32_BIT, 0, 1), /* x32 */
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(filter), .filter = filter };
        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ? negative_errno() : 0;
}

int proxy_confine(void) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        int r = no_file_writes();
        return r < 0 ? r : no_exec();
}
