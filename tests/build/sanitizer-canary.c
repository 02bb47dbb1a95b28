/* SPDX-License-Identifier: MIT */
/* tests/build/sanitizer-canary: a leak and an undefined signed overflow, on
 * purpose. tools/test --sanitize runs it inside the sandbox under bgrund's
 * own restrictions (NoNewPrivileges=, its CapabilityBoundingSet=) and expects
 * both reports in its log_path: no sanitizer report from bgrund then means
 * there was none to make, not that none could be written, or that
 * LeakSanitizer (which ptraces the process's own threads) could not run. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static char *volatile sink;

static __attribute__((noinline)) void leak(void) {
        sink = malloc(4096);
        if (sink)
                sink[0] = 1;
        sink = NULL; /* the only pointer to it: gone */
}

int main(int argc, char **argv) {
        volatile int big = INT_MAX;
        int sum = big + argc; /* signed overflow: UBSan */
        leak();
        printf("%d\n", sum);
        return 0;
}
