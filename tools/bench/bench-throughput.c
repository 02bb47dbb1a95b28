/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 2: throughput, many short jobs back to back and in
 * parallel, against systemd-run and raw StartTransientUnit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"

/* n units started through StartTransientUnit (par = start jobs in flight) or
 * systemd-run processes (par = processes at a time), until all have ended and
 * been collected (UnitRemoved). Seconds, or -1. */
static double units_many(bool systemd_run, size_t n, unsigned par, size_t *ret_failed) {
        Unit *units = xcalloc(n, sizeof(Unit));
        size_t *active = xcalloc(par, sizeof(size_t));
        unsigned n_active = 0;
        size_t next = 0, failed = 0, removed_from = 0;
        double deadline_s = 60 + (double) n * 0.5;
        uint64_t t0 = now_ns();

        for (size_t i = 0; i < n; i++)
                units[i] = (Unit) { .name = next_unit_name(".service"), .pidfd = -1 };

        while (next < n || n_active > 0) {
                while (next < n && n_active < par) {
                        Unit *u = &units[next];
                        if (systemd_run) {
                                char *unit_arg = fmt("--unit=%s", u->name);
                                char *argv[] = { (char *) "systemd-run", (char *) "--quiet", (char *) "--collect",
                                                 (char *) "-p", (char *) "Type=exec", unit_arg, (char *) "true", NULL };
                                u->pid = spawn(argv, &u->pidfd);
                                u->state = 1;
                                free(unit_arg);
                        } else
                                stu_send(u, 0);
                        active[n_active++] = next++;
                }
                int fds[64];
                for (unsigned k = 0; k < n_active; k++)
                        fds[k] = units[active[k]].pidfd;
                if (systemd_run)
                        wait_bus_and(fds, n_active, USEC_PER_SEC);
                else
                        bus_step(USEC_PER_SEC);
                for (unsigned k = 0; k < n_active;) {
                        Unit *u = &units[active[k]];
                        bool done;
                        if (systemd_run) {
                                int st;
                                pid_t p = waitpid(u->pid, &st, WNOHANG);
                                if (p < 0 && errno != EINTR)
                                        die("waitpid: %m");
                                done = p == u->pid;
                                if (done) {
                                        close(u->pidfd);
                                        u->pidfd = -1;
                                        u->state = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 3 : 4;
                                }
                        } else
                                done = unit_started(u);
                        if (done) {
                                if (u->state == 4)
                                        failed++;
                                active[k] = active[--n_active];
                        } else
                                k++;
                }
                if (s_since(t0) > deadline_s)
                        die("starting %zu units took longer than %.0f s", n, deadline_s);
        }
        double secs = -1;
        while (true) {
                while (removed_from < n && (units[removed_from].state == 4 || unit_removed(&units[removed_from])))
                        removed_from++;
                if (removed_from == n) {
                        secs = s_since(t0);
                        break;
                }
                if (s_since(t0) > deadline_s) {
                        progress("units not collected after %.0f s (first: %s)", deadline_s,
                                 units[removed_from].name);
                        break;
                }
                bus_step(USEC_PER_SEC);
        }
        for (size_t i = 0; i < n; i++)
                free(units[i].name);
        free(units);
        free(active);
        *ret_failed = failed;
        return secs;
}

/* The faster of two runs (-1 = failed). */
static double best_time(double a, double b) {
        if (a < 0)
                return b;
        if (b < 0)
                return a;
        return a < b ? a : b;
}

void bench_throughput(void) {
        size_t n = S.throughput;
        JobId *ids = xcalloc(n, sizeof(JobId));
        struct {
                double bgrun, sdrun, raw;
                size_t fb, fs, fr;
        } res[2] = { { -1, -1, -1, 0, 0, 0 }, { -1, -1, -1, 0, 0, 0 } };

        /* Each run twice, in the order bgrun, systemd-run, raw and then the
         * reverse, and the faster of the two counts: noise from the shared
         * machine only ever slows a run down. */
        for (int p = 0; p < 2; p++) {
                unsigned par = p == 0 ? 1 : S.parallel;
                for (int round = 0; round < 2; round++)
                        for (int k = 0; k < 3; k++) {
                                int which = round == 0 ? k : 2 - k;
                                size_t f = 0;
                                double t;
                                progress("2. throughput: %zu × true, %u at a time, round %d of 2: %s", n, par,
                                         round + 1, which == 0 ? "bgrun" : which == 1 ? "systemd-run" : "raw StartTransientUnit");
                                if (which == 0) {
                                        memset(ids, 0, n * sizeof(JobId));
                                        t = launch_many("true", n, par, ids, true, &f);
                                        batch("Forget", ids, n, 64);
                                        res[p].bgrun = best_time(res[p].bgrun, t);
                                        res[p].fb += f;
                                } else if (which == 1) {
                                        t = units_many(true, n, par, &f);
                                        res[p].sdrun = best_time(res[p].sdrun, t);
                                        res[p].fs += f;
                                } else {
                                        t = units_many(false, n, par, &f);
                                        res[p].raw = best_time(res[p].raw, t);
                                        res[p].fr += f;
                                }
                        }
        }
        for (int p = 0; p < 2; p++) {
                unsigned par = p == 0 ? 1 : S.parallel;
                double rb = res[p].bgrun > 0 ? (double) n / res[p].bgrun : -1;
                double rs = res[p].sdrun > 0 ? (double) n / res[p].sdrun : -1;
                double rr = res[p].raw > 0 ? (double) n / res[p].raw : -1;
                char *what = par == 1 ? fmt("Throughput: %zu × `true` back to back, until all ended and collected (faster of 2 runs)", n)
                                      : fmt("Throughput: %zu × `true`, %u at a time, until all ended and collected (faster of 2 runs)",
                                            n, par);
                char *bcell = rb > 0 ? fmt("%.1f jobs/s (%.2f s)", rb, res[p].bgrun) : fmt("n/a");
                row(what, bcell,
                    rs > 0 ? fmt("`systemd-run --collect -p Type=exec true`%s: %.1f units/s (%.2f s)",
                                 par == 1 ? ", one after another" : fmt(", %u processes at a time", par), rs,
                                 res[p].sdrun)
                           : fmt("systemd-run: n/a"),
                    rb > 0 && rs > 0 ? fmt("%.2fx", rb / rs) : fmt("n/a"), fmt("ahead of systemd-run: %s",
                                                                             rb > 0 && rs > 0 && rb > rs ? "yes" : "no"));
                row(fmt("″"), fmt("%s", bcell),
                    rr > 0 ? fmt("raw StartTransientUnit, %u start job%s in flight, one connection: %.1f units/s (%.2f s)",
                                 par, par == 1 ? "" : "s", rr, res[p].raw)
                           : fmt("raw StartTransientUnit: n/a"),
                    rb > 0 && rr > 0 ? fmt("%.2fx", rb / rr) : fmt("n/a"), fmt("– (systemd's own cost)"));
                if (res[p].fb || res[p].fs || res[p].fr)
                        note(fmt("throughput (%u at a time, 2 runs): failures: bgrun %zu, systemd-run %zu, raw %zu", par,
                                 res[p].fb, res[p].fs, res[p].fr));
        }
        free(ids);
}
