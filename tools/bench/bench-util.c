/* SPDX-License-Identifier: MIT */
/* bgrun-bench: messages, time, samples and their percentiles, the
 * formatting of figures, and child processes. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/pidfd.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-common.h"

/* --- messages ---------------------------------------------------------- */

void progress(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("bgrun-bench: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

_Noreturn void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("bgrun-bench: fatal: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        cleanup();
        exit(1);
}

char *fmt(const char *f, ...) {
        va_list ap;
        char *s;
        va_start(ap, f);
        if (vasprintf(&s, f, ap) < 0)
                abort();
        va_end(ap);
        return s;
}

void *xcalloc(size_t n, size_t size) {
        void *p = calloc(n ? n : 1, size);
        if (!p)
                abort();
        return p;
}

/* --- time and statistics ----------------------------------------------- */

uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

/* CLOCK_REALTIME in µs, to compare with the record's timestamps. */
uint64_t now_rt_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

double ms_since(uint64_t t0) {
        return (double) (now_ns() - t0) / 1e6;
}

double s_since(uint64_t t0) {
        return (double) (now_ns() - t0) / 1e9;
}

void sample_add(Samples *s, double x) {
        if (s->n == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 64;
                s->v = realloc(s->v, s->cap * sizeof(double));
                if (!s->v)
                        abort();
        }
        s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

/* The p-th percentile, interpolated between closest ranks; -1 if empty. */
double pct(Samples *s, double p) {
        if (s->n == 0)
                return -1;
        qsort(s->v, s->n, sizeof(double), cmp_double);
        double rank = p / 100.0 * (double) (s->n - 1);
        size_t lo = (size_t) rank, hi = lo + 1 < s->n ? lo + 1 : lo;
        return s->v[lo] + (s->v[hi] - s->v[lo]) * (rank - (double) lo);
}

double med(Samples *s) {
        return pct(s, 50);
}

double p99(Samples *s) {
        return pct(s, 99);
}

/* "12.3 ms" with enough digits for small values. */
char *ms_str(double ms) {
        if (ms < 0)
                return fmt("n/a");
        if (ms < 1)
                return fmt("%.3f ms", ms);
        if (ms < 10)
                return fmt("%.2f ms", ms);
        return fmt("%.1f ms", ms);
}

char *lat_str(Samples *s) {
        if (s->n == 0)
                return fmt("n/a");
        return fmt("%s / %s", ms_str(med(s)), ms_str(p99(s)));
}

char *ratio_str(double a, double b) {
        if (a < 0 || b <= 0)
                return fmt("n/a");
        return fmt("%.2fx", a / b);
}

/* --- child processes --------------------------------------------------- */

pid_t spawn(char *const argv[], int *ret_pidfd) {
        pid_t pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fd >= 0) {
                        dup2(fd, STDIN_FILENO);
                        dup2(fd, STDOUT_FILENO);
                }
                execvp(argv[0], argv);
                _exit(127);
        }
        if (ret_pidfd) {
                *ret_pidfd = pidfd_open(pid, 0);
                if (*ret_pidfd < 0)
                        die("pidfd_open: %m");
        }
        return pid;
}

int reap(pid_t pid) {
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        die("waitpid: %m");
        return st;
}

/* Run argv and wait for it; its wall time in ms, or -1 if it failed. */
double run_timed(char *const argv[]) {
        uint64_t t0 = now_ns();
        int st = reap(spawn(argv, NULL));
        double ms = ms_since(t0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                progress("%s failed (status 0x%x)", argv[0], st);
                return -1;
        }
        return ms;
}

/* --- bgrund's state directory ------------------------------------------ */

#define STATE_DIR "/var/lib/bgrun"

const char *state_fs(void) {
        struct statfs f;
        if (statfs(STATE_DIR, &f) < 0)
                return fmt("? (%m)");
        switch ((unsigned long) f.f_type) {
        case EXT4_SUPER_MAGIC: /* ext2, ext3 and ext4 share it */
                return "ext4";
        case TMPFS_MAGIC:
                return "tmpfs";
        default:
                return fmt("0x%lx", (unsigned long) f.f_type);
        }
}

bool storage_switchable(void) {
        const char *tool = getenv("BGRUN_BENCH_TOOL");
        return tool && *tool;
}

void set_storage(const char *kind) {
        const char *tool = getenv("BGRUN_BENCH_TOOL"), *dir = getenv("BGRUN_BENCH_STATE_DIR");
        if (!tool || !*tool || !dir || !*dir)
                die("set_storage: BGRUN_BENCH_TOOL and BGRUN_BENCH_STATE_DIR must be set");
        char *argv[] = { (char *) tool, (char *) "--set-storage", (char *) kind, (char *) dir, NULL };
        int st = reap(spawn(argv, NULL));
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                die("%s --set-storage %s failed (status 0x%x)", tool, kind, st);
        const char *now = state_fs();
        if (!streq(now, kind))
                die("bgrund's state directory is on %s, not %s", now, kind);
        bgrun_subscribe();
        progress("bgrund restarted with its state on %s", kind);
}
