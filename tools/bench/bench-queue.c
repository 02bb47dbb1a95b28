/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 7: the queue (issue #38). n × `true` submitted at once with
 * Queue and MaxParallel=par, until all ended: against the same n with par
 * Launches in flight and no queue (the queue's own cost), and, through each
 * one's command line, against task-spooler (`tsp -S par`), a queue first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"

/* task-spooler's own socket and output files, beside bgrund's state (the
 * same file system for both), gone after the run. */
#define TSP_DIR "/var/lib/bgrun/bgrun-bench-tsp"

/* sh -c SCRIPT, timed: seconds, or -1. */
static double shell_timed(const char *script) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) script, NULL };
        double ms = run_timed(argv);
        return ms < 0 ? -1 : ms / 1000;
}

static bool have_tsp(void) {
        return system("command -v tsp >/dev/null 2>&1") == 0;
}

/* `bgrun run --queue --parallel par` n times, then `bgrun wait` on all. */
static double cli_bgrun(size_t n, unsigned par) {
        char *script = fmt("set -e; ids=$(for i in $(seq %zu); do bgrun run -q -s %s --queue --parallel %u -- true; done); "
                           "bgrun wait -t 600s $ids >/dev/null",
                           n, session, par);
        double t = shell_timed(script);
        free(script);
        return t;
}

/* `tsp true` n times with `tsp -S par`, until tsp lists none running or
 * queued (polled every 10 ms), its server killed after. */
static double cli_tsp(size_t n, unsigned par) {
        char *script = fmt("set -e; rm -rf " TSP_DIR "; mkdir -p " TSP_DIR "; export TS_SOCKET=" TSP_DIR "/socket "
                           "TMPDIR=" TSP_DIR "; tsp -S %u; "
                           "for i in $(seq %zu); do tsp true; done >/dev/null; "
                           "while tsp -l | grep -qE ' (running|queued) '; do sleep 0.01; done",
                           par, n);
        double t = shell_timed(script);
        free(script);
        (void) !system("TS_SOCKET=" TSP_DIR "/socket tsp -K >/dev/null 2>&1; rm -rf " TSP_DIR);
        return t;
}

/* The contract's floor from the shell (issue #52): n × bgrun-bench-floor
 * submit (beside this program), each a whole process that connects to the
 * bus, syncs its record, starts `sh -c true` in a scope of its own and sees
 * it exec'd, then until systemd has none of their scopes left. Seconds, or
 * -1. */
static double cli_floor(size_t n) {
        char exe[4096];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k <= 0)
                return -1;
        exe[k] = '\0';
        char *slash = strrchr(exe, '/');
        if (!slash)
                return -1;
        *slash = '\0';
        char *script = fmt("set -e; for i in $(seq %zu); do '%s/bgrun-bench-floor' submit; done; "
                           "while systemctl list-units --all --no-legend 'bgrun-floor-*' | grep -q .; do sleep 0.01; done",
                           n, exe);
        double t = shell_timed(script);
        free(script);
        (void) !system("rm -rf /var/lib/bgrun/bgrun-bench-floor");
        return t;
}

static double best(double a, double b) {
        return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

void bench_queue(void) {
        size_t n = S.throughput, f_queue = 0, f_plain = 0;
        unsigned par = S.parallel;
        JobId *ids = xcalloc(n, sizeof(JobId));
        double queued = -1, plain = -1, cli = -1, tsp = -1, floor = -1;
        bool tsp_ok = have_tsp();

        /* Twice each, alternating, the faster counts (as throughput). */
        for (int round = 0; round < 2; round++) {
                progress("7. queue: %zu × true, Queue + MaxParallel=%u, round %d of 2", n, par, round + 1);
                memset(ids, 0, n * sizeof(JobId));
                queued = best(queued, launch_many_queued("true", n, 64, par, ids, &f_queue));
                batch("Forget", ids, n, 64);
                progress("7. queue: %zu × true, %u Launches in flight, no queue, round %d of 2", n, par, round + 1);
                memset(ids, 0, n * sizeof(JobId));
                plain = best(plain, launch_many("true", n, par, ids, true, &f_plain));
                batch("Forget", ids, n, 64);
                progress("7. queue: bgrun run --queue --parallel %u × %zu, round %d of 2", par, n, round + 1);
                cli = best(cli, cli_bgrun(n, par));
                progress("7. queue: the contract's floor from the shell, bgrun-bench-floor submit × %zu, round %d of 2", n,
                         round + 1);
                floor = best(floor, cli_floor(n));
                if (tsp_ok) {
                        progress("7. queue: tsp -S %u, tsp true × %zu, round %d of 2", par, n, round + 1);
                        tsp = best(tsp, cli_tsp(n, par));
                }
        }
        free(ids);

        char *cell = queued > 0 ? fmt("%.1f jobs/s (%.2f s)", (double) n / queued, queued) : fmt("n/a");
        row(fmt("Queue: %zu × `true` submitted at once with `Queue` + `MaxParallel=%u`, until all ended (faster of 2)", n,
                par),
            cell,
            plain > 0 ? fmt("the same %zu, %u Launches in flight, no queue: %.1f jobs/s (%.2f s)", n, par,
                            (double) n / plain, plain)
                      : fmt("n/a"),
            queued > 0 && plain > 0 ? fmt("%.2fx", plain / queued) : fmt("n/a"), fmt("≥ 0.67x (the queue's own cost)"));
        row(fmt("Queue from the shell: `bgrun run --queue --parallel %u -- true` × %zu, then `bgrun wait` (faster of 2)",
                par, n),
            cli > 0 ? fmt("%.1f jobs/s (%.2f s)", (double) n / cli, cli) : fmt("n/a"),
            tsp > 0 ? fmt("task-spooler: `tsp -S %u`, `tsp true` × %zu, until none runs or waits: %.1f jobs/s (%.2f s)",
                          par, n, (double) n / tsp, tsp)
                    : fmt("task-spooler: n/a (no tsp: tools/install-deps --bench)"),
            cli > 0 && tsp > 0 ? fmt("%.2fx", tsp / cli) : fmt("n/a"), fmt("ahead of tsp: %s", cli > 0 && tsp > 0 && cli < tsp ? "yes" : "no"));
        /* Where tsp cannot be caught within the contract (a unit per job, a
         * synced record, the command contained before it runs), the goal is
         * its floor measured here, less 20 %. */
        double rf = cli > 0 && floor > 0 ? floor / cli : -1;
        row(fmt("″"), cli > 0 ? fmt("%.1f jobs/s (%.2f s)", (double) n / cli, cli) : fmt("n/a"),
            floor > 0 ? fmt("the contract's floor from the shell, bare C: `bgrun-bench-floor submit` × %zu (a process that "
                            "connects to the bus, writes and fsyncs a 2 KiB record, starts `sh -c true` in a transient "
                            "scope of its own, lets it go once inside and sees it exec'd), until systemd has none left: "
                            "%.1f jobs/s (%.2f s)",
                            n, (double) n / floor, floor)
                      : fmt("the contract's floor: n/a"),
            rf > 0 ? fmt("%.2fx", rf) : fmt("n/a"),
            fmt("≥ 0.83x (the floor's rate less 20 %%): %s", rf < 0 ? "n/a" : rf >= 1 / 1.2 ? "met" : "not met"));
        if (f_queue || f_plain)
                note(fmt("queue (2 runs): failures: queued %zu, plain %zu", f_queue, f_plain));
}
