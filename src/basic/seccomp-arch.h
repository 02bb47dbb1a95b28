/* SPDX-License-Identifier: MIT */
#pragma once

/* The architecture a seccomp filter of ours checks first: the native one's
 * AUDIT_ARCH_, which a system call of another ABI (i386 on x86_64) does not
 * carry. */

#include <linux/audit.h>

#if defined(__x86_64__)
#  define SECCOMP_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#  define SECCOMP_ARCH_NATIVE AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#  define SECCOMP_ARCH_NATIVE AUDIT_ARCH_I386
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#  define SECCOMP_ARCH_NATIVE AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#  define SECCOMP_ARCH_NATIVE AUDIT_ARCH_S390X
#elif defined(__riscv) && __riscv_xlen == 64
#  define SECCOMP_ARCH_NATIVE AUDIT_ARCH_RISCV64
#else
#  error "bgrun's seccomp filters do not know this architecture"
#endif

/* x86_64's x32 system calls carry this bit in their number. */
#define SECCOMP_X32_BIT 0x40000000
