/* SPDX-License-Identifier: MIT */
/* bgrun-bench-start-nolibc: a program that only exits, with no libc: what
 * an exec and an exit cost here, beside an empty glibc program
 * (bench-start-glibc.c), whose start-up before main reads the CPU's
 * features and caches with CPUID, an instruction a virtual machine traps
 * (tools/bench/bench-cli-breakdown). x86-64 only. */
__attribute__((noreturn)) void _start(void);

void _start(void) {
        __asm__ volatile("movl $60, %eax\n\t" /* exit(0) */
                         "xorl %edi, %edi\n\t"
                         "syscall");
        __builtin_unreachable();
}
