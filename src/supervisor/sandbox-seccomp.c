/* SPDX-License-Identifier: MIT */
/* The sandbox's seccomp filter (sandbox-seccomp.h), built on the stack. */
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "macro.h"
#include "sandbox-seccomp.h"
#include "seccomp-arch.h"

#define ARCH_NATIVE SECCOMP_ARCH_NATIVE

#define PROGRAM_MAX 96

typedef struct Program {
        struct sock_filter f[PROGRAM_MAX];
        unsigned n;
} Program;

static void emit(Program *p, struct sock_filter ins) {
        if (p->n < PROGRAM_MAX)
                p->f[p->n++] = ins;
        else
                p->n = PROGRAM_MAX + 1; /* too long: refused at install */
}

#define RET(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, field))
/* An argument's 32-bit halves (the machines bgrun runs on are little-endian
 * but s390x, where the halves swap). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#  define ARG_LOW(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, args[i]))
#  define ARG_HIGH(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, args[i]) + 4)
#else
#  define ARG_LOW(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, args[i]) + 4)
#  define ARG_HIGH(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t) offsetof(struct seccomp_data, args[i]))
#endif

/* nr, if the accumulator holds it: action. */
static void on_call(Program *p, uint32_t nr, uint32_t action) {
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
        emit(p, (struct sock_filter) RET(action));
}

/* socket() and socketpair() (numbers socket_nr, socketpair_nr; the
 * accumulator holds the call's number): the family, argument 0, checked
 * against the list. */
static void families_check(Program *p, const SandboxFamilies *fam, uint32_t socket_nr, uint32_t socketpair_nr) {
        uint32_t listed[32];
        unsigned k = 0;
        for (unsigned af = 0; af < 32; af++)
                if (fam->families & (UINT32_C(1) << af))
                        listed[k++] = af;
        uint32_t match = fam->deny ? ERRNO(EAFNOSUPPORT) : SECCOMP_RET_ALLOW;
        uint32_t other = fam->deny ? SECCOMP_RET_ALLOW : ERRNO(EAFNOSUPPORT);
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, socket_nr, 1, 0));
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, socketpair_nr, 0, (uint8_t) (k + 3)));
        emit(p, (struct sock_filter) ARG_LOW(0));
        for (unsigned i = 0; i < k; i++)
                emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, listed[i], (uint8_t) (k - i), 0));
        emit(p, (struct sock_filter) RET(other));
        emit(p, (struct sock_filter) RET(match));
}

/* The native ABI's calls; the accumulator holds the number. */
static void native_calls(Program *p, const SandboxFamilies *fam) {
#if defined(__x86_64__)
        /* x32's numbers carry this bit: not the native layouts either. */
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SECCOMP_X32_BIT, 0, 1));
        emit(p, (struct sock_filter) RET(ERRNO(ENOSYS)));
#endif
        on_call(p, SYS_connect, SECCOMP_RET_USER_NOTIF);
        on_call(p, SYS_sendmsg, SECCOMP_RET_USER_NOTIF);
        on_call(p, SYS_sendmmsg, SECCOMP_RET_USER_NOTIF);
        on_call(p, SYS_io_uring_setup, ERRNO(EPERM));
        /* sendto() without an address (send()) reaches only the socket's
         * peer: let through; with one, to the supervisor. */
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendto, 0, 6));
        emit(p, (struct sock_filter) ARG_LOW(4));
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
        emit(p, (struct sock_filter) ARG_HIGH(4));
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
        emit(p, (struct sock_filter) RET(SECCOMP_RET_USER_NOTIF));
        emit(p, (struct sock_filter) RET(SECCOMP_RET_ALLOW));
        if (fam->restricted)
                families_check(p, fam, SYS_socket, SYS_socketpair);
        emit(p, (struct sock_filter) RET(SECCOMP_RET_ALLOW));
}

/* Another ABI's calls (the accumulator holds the architecture). */
static void other_abis(Program *p, const SandboxFamilies *fam) {
#if defined(__x86_64__)
        /* i386's socket calls fail: socketcall() hides its arguments in
         * memory, and the supervisor reads the native layouts only. */
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 1, 0));
        emit(p, (struct sock_filter) RET(ERRNO(ENOSYS)));
        emit(p, (struct sock_filter) LOAD(nr));
        static const uint32_t refused[] = { 102 /* socketcall */, 362 /* connect */, 369 /* sendto */,
                                            370 /* sendmsg */, 345 /* sendmmsg */ };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                on_call(p, refused[i], ERRNO(EACCES));
        on_call(p, 425 /* io_uring_setup */, ERRNO(EPERM));
        if (fam->restricted) {
                on_call(p, 359 /* socket */, ERRNO(EAFNOSUPPORT));
                on_call(p, 360 /* socketpair */, ERRNO(EAFNOSUPPORT));
        }
        emit(p, (struct sock_filter) RET(SECCOMP_RET_ALLOW));
#else
        emit(p, (struct sock_filter) RET(ERRNO(ENOSYS)));
#endif
}

int sandbox_seccomp_install(const SandboxFamilies *families, int *ret_listener) {
        Program p = { .n = 0 };
        emit(&p, (struct sock_filter) LOAD(arch));
        emit(&p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NATIVE, 1, 0));
        unsigned to_other = p.n;
        emit(&p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JA | BPF_K, 0, 0, 0));
        emit(&p, (struct sock_filter) LOAD(nr));
        native_calls(&p, families);
        p.f[to_other].k = p.n - to_other - 1;
        emit(&p, (struct sock_filter) LOAD(arch));
        other_abis(&p, families);
        if (p.n > PROGRAM_MAX)
                return -E2BIG;

        struct sock_fprog prog = { .len = (unsigned short) p.n, .filter = p.f };
        /* Once the supervisor took a call, the job waits for its answer
         * through signals (but SIGKILL): an interrupted connect() would be
         * made again, after the supervisor's had connected it. */
        long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                          SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
        if (fd < 0 && errno == EINVAL) /* before 5.19 */
                fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd < 0)
                return negative_errno();
        *ret_listener = (int) fd;
        return 0;
}
