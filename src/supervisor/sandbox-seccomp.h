/* SPDX-License-Identifier: MIT */
#pragma once

/* A sandboxed job's seccomp filter, installed by the command's own process
 * last before its exec (sandbox-apply.h's rule: system calls only). What a
 * filter can see is a system call's number and its arguments' values,
 * never what a pointer points to; so:
 *   - connect(), sendto() with an address and sendmsg()/sendmmsg() go to
 *     the supervisor (SECCOMP_RET_USER_NOTIF), which has them made, as the
 *     job's user, by the job's socket broker (socket-broker.h): a
 *     pathname Unix socket is reached only beneath the job's writable
 *     paths. None is ever let through to be made by the kernel, which
 *     would read the address, and the descriptor, again;
 *   - io_uring_setup() fails (EPERM): io_uring's connect and sendmsg pass
 *     no filter;
 *   - socket() and socketpair() of a family RestrictAddressFamilies leaves
 *     out fail with EAFNOSUPPORT, as systemd's do;
 *   - the other ABIs of the machine (i386's on x86-64) make none of those
 *     calls: their layouts are not the supervisor's. */

#include <stdbool.h>
#include <stdint.h>

/* Which address families socket() and socketpair() may make. */
typedef struct SandboxFamilies {
        bool restricted;   /* false: any */
        bool deny;         /* the list is what may not be made ('~') */
        uint32_t families; /* bit AF_x of each family listed */
} SandboxFamilies;

/* Install the filter in the calling process (no_new_privs is set already).
 * *ret_listener: the notification descriptor the supervisor reads. */
int sandbox_seccomp_install(const SandboxFamilies *families, int *ret_listener);
