/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 5a: memory from /proc, and the memory per running job
 * (bgrun-supervisor, bgrund, systemd). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"

/* --- memory from /proc ------------------------------------------------- */

/* A "Key:   123 kB" line of /proc/PID/FILE, in kB; -1 if absent. */
static long proc_kb(pid_t pid, const char *file, const char *key) {
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, file);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        long v = -1;
        size_t klen = strlen(key);
        while (fgets(line, sizeof line, f))
                if (strncmp(line, key, klen) == 0) {
                        v = strtol(line + klen, NULL, 10);
                        break;
                }
        fclose(f);
        return v;
}

long rss_kb(pid_t pid) {
        return proc_kb(pid, "status", "VmRSS:");
}

static long pss_kb(pid_t pid) {
        return proc_kb(pid, "smaps_rollup", "Pss:");
}

/* Unique set size: the pages only this process has. */
static long uss_kb(pid_t pid) {
        long c = proc_kb(pid, "smaps_rollup", "Private_Clean:"), d = proc_kb(pid, "smaps_rollup", "Private_Dirty:");
        return c < 0 || d < 0 ? -1 : c + d;
}

typedef struct Mem {
        long rss, pss, uss;
} Mem;

/* Sums over every bgrun-supervisor process. */
static unsigned supervisors_memory(Mem *ret) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        unsigned n = 0;
        Mem m = {};
        if (!d)
                die("/proc: %m");
        while ((de = readdir(d))) {
                char path[300], argv0[512];
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                ssize_t k = read(fd, argv0, sizeof argv0 - 1);
                close(fd);
                if (k <= 0)
                        continue;
                argv0[k] = '\0';
                const char *base = strrchr(argv0, '/');
                base = base ? base + 1 : argv0;
                if (!streq(base, "bgrun-supervisor"))
                        continue;
                pid_t pid = (pid_t) atoi(de->d_name);
                long r = rss_kb(pid), p = pss_kb(pid), u = uss_kb(pid);
                if (r < 0)
                        continue;
                m.rss += r;
                m.pss += p > 0 ? p : 0;
                m.uss += u > 0 ? u : 0;
                n++;
        }
        closedir(d);
        *ret = m;
        return n;
}

/* --- 5. memory with jobs running --------------------------------------- */

void bench_running_memory(void) {
        size_t n = S.running;
        JobId *ids = xcalloc(n, sizeof(JobId));
        pid_t dpid = bgrund_pid();
        wait_no_running();
        long d0 = rss_kb(dpid), p1_0 = rss_kb(1);
        Mem m0, m1;
        unsigned s0 = supervisors_memory(&m0);

        progress("5a. memory: %zu jobs of `sleep 1000` running", n);
        size_t failed = 0;
        launch_many("sleep 1000", n, S.memory_parallel, ids, false, &failed);
        usleep(500 * 1000);
        unsigned ns = supervisors_memory(&m1) - s0;
        m1.rss -= m0.rss, m1.pss -= m0.pss, m1.uss -= m0.uss;
        if (bgrund_pid() != dpid)
                note(fmt("bgrund's pid changed during the run (restarted?)"));
        long d1 = rss_kb(dpid), p1_1 = rss_kb(1);
        uint32_t nrun = running_jobs();
        progress("   ... %u running, %u supervisors; killing them", nrun, ns);
        batch("Kill", ids, n, 32);
        batch("Forget", ids, n, 64);
        if (failed)
                note(fmt("per-job memory: %zu of %zu launches failed", failed, n));

        double per_rss = ns ? (double) m1.rss / ns : -1, per_pss = ns ? (double) m1.pss / ns : -1,
               per_uss = ns ? (double) m1.uss / ns : -1;
        double per_d = (double) (d1 - d0) / (double) n, per_p1 = (double) (p1_1 - p1_0) / (double) n;
        double total = per_rss + per_d;
        row(fmt("Memory per running job (%zu running): bgrun-supervisor VmRSS sum / %u", n, ns),
            fmt("%.0f KiB (PSS %.0f KiB, private %.0f KiB)", per_rss, per_pss, per_uss),
            fmt("– (VmRSS counts shared library pages in every process; PSS shares them out, private excludes them)"),
            fmt("–"), fmt("–"));
        row(fmt("Memory per running job: bgrund VmRSS delta / %zu (%.1f → %.1f MiB)", n, d0 / KIB, d1 / KIB),
            fmt("%.1f KiB", per_d),
            fmt("systemd (PID 1) VmRSS delta / %zu: %.1f KiB (systemd's cost of a unit, not bgrun's; for scale)", n,
                per_p1),
            fmt("–"),
            fmt("< 1 MiB per job: supervisor VmRSS + bgrund = %.0f KiB: %s; by PSS %.0f KiB, private %.0f KiB: %s",
                total, total < 1024 ? "met" : "not met", per_pss + per_d, per_uss + per_d,
                per_pss + per_d < 1024 ? "met" : "not met"));
        free(ids);
}
