/* SPDX-License-Identifier: MIT */
/* bgrun-bench-start-glibc: an empty program, statically linked with glibc:
 * glibc's own start-up and nothing else (no dynamic linking), beside
 * bench-start-nolibc.c (tools/bench/bench-cli-breakdown). */
int main(void) {
        return 0;
}
