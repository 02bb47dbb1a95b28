/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 1: launch latency, bgrun's Launch interleaved with a raw
 * StartTransientUnit, a scope of a spawned process, systemd-run --scope and a
 * plain fork+exec. */
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "bench-common.h"

extern char **environ;

/* One raw StartTransientUnit, timed until its start job is removed (done). */
static double raw_stu_once(void) {
        Unit u = { .name = next_unit_name(".service"), .pidfd = -1 };
        uint64_t t0 = now_ns();
        stu_send(&u, 0);
        while (!unit_started(&u)) {
                if (s_since(t0) > 30)
                        die("%s did not start in 30 s", u.name);
                bus_step(USEC_PER_SEC);
        }
        double ms = u.state == 3 ? ms_since(t0) : -1;
        wait_unit_removed(&u, 10);
        free(u.name);
        return ms;
}

/* The floor of bgrund's own path: spawn a process, then one raw
 * StartTransientUnit of a scope holding it, timed until its start job is
 * done. The process (a sleep) is killed and reaped afterwards, untimed. */
static double raw_scope_once(void) {
        Unit u = { .name = next_unit_name(".scope"), .pidfd = -1 };
        char *argv[] = { (char *) "/bin/sleep", (char *) "30", NULL };
        uint64_t t0 = now_ns();
        pid_t pid;
        if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
                die("posix_spawn: %m");
        stu_send(&u, pid);
        while (!unit_started(&u)) {
                if (s_since(t0) > 30)
                        die("%s did not start in 30 s", u.name);
                bus_step(USEC_PER_SEC);
        }
        double ms = u.state == 3 ? ms_since(t0) : -1;
        int pidfd = pidfd_open(pid, 0); /* our own unreaped child: certainly it */
        if (pidfd < 0 || pidfd_send_signal(pidfd, SIGKILL, NULL, 0) < 0)
                die("cannot kill the reference scope's sleep: %m");
        close(pidfd);
        (void) reap(pid);
        wait_unit_removed(&u, 10);
        free(u.name);
        return ms;
}

void bench_launch(void) {
        Samples sb = {}, sr = {}, sp = {}, ss = {}, sf = {}, s_exec = {}, s_reply = {};
        char *scope_argv[] = { (char *) "systemd-run", (char *) "--scope", (char *) "--quiet", (char *) "true", NULL };
        char *true_argv[] = { (char *) "/bin/true", NULL };
        size_t bad = 0;

        progress("1. launch latency: %u rounds of bgrun Launch, raw StartTransientUnit, systemd-run --scope, "
                 "fork+exec (interleaved, %u warm-up rounds)", S.launches, S.warmup);
        for (unsigned i = 0; i < S.warmup + S.launches; i++) {
                bool keep = i >= S.warmup;
                JobId id;
                double ms;
                Rec rec;

                /* bgrun: Launch returns once the job runs; then let it end
                 * and forget it, untimed, so rounds do not overlap. */
                uint64_t rt0 = now_rt_usec();
                if (launch("true", &id, &ms)) {
                        uint64_t rt1 = now_rt_usec();
                        if (keep)
                                sample_add(&sb, ms);
                        if (record("Wait", id.s, 30 * USEC_PER_SEC, &rec) && !streq(rec.status, "exited"))
                                bad++;
                        if (keep && rec.started_at >= rt0 && rec.started_at <= rt1) {
                                sample_add(&s_exec, (double) (rec.started_at - rt0) / 1000);
                                sample_add(&s_reply, (double) (rt1 - rec.started_at) / 1000);
                        }
                        forget(id.s);
                } else
                        bad++;

                ms = raw_stu_once();
                if (keep && ms >= 0)
                        sample_add(&sr, ms);

                ms = raw_scope_once();
                if (keep && ms >= 0)
                        sample_add(&sp, ms);

                ms = run_timed(scope_argv);
                if (keep && ms >= 0)
                        sample_add(&ss, ms);

                ms = run_timed(true_argv);
                if (keep && ms >= 0)
                        sample_add(&sf, ms);

                bus_drain();
                if (keep && (i - S.warmup + 1) % 50 == 0)
                        progress("  ... %u of %u rounds", i - S.warmup + 1, S.launches);
        }
        if (bad)
                note(fmt("launch latency: %zu of %u bgrun jobs failed or did not exit cleanly", bad,
                         S.launches + S.warmup));

        char *what = fmt("Launch → job running, `true`, one connection, sequential; median / p99 (n=%u)", S.launches);
        double r_raw = sr.n ? med(&sb) / med(&sr) : -1;
        double r_scope = ss.n ? med(&sb) / med(&ss) : -1;
        row(what, lat_str(&sb), fmt("raw StartTransientUnit (Type=exec /bin/true) until its JobRemoved: %s", lat_str(&sr)),
            fmt("%s (p99 %s)", ratio_str(med(&sb), med(&sr)), ratio_str(p99(&sb), p99(&sr))),
            fmt("≤ 1.2x: %s", r_raw < 0 ? "n/a" : r_raw <= 1.2 ? "met" : "not met"));
        row(fmt("″"), lat_str(&sb),
            fmt("posix_spawn + raw StartTransientUnit of a scope holding it, until its JobRemoved (the floor of "
                "bgrund's path, with no supervisor and no command): %s", lat_str(&sp)),
            ratio_str(med(&sb), med(&sp)), fmt("– (systemd's own cost)"));
        row(fmt("″"), lat_str(&sb), fmt("`systemd-run --scope --quiet true`: %s", lat_str(&ss)),
            ratio_str(med(&sb), med(&ss)),
            fmt("well ahead of systemd-run: %s",
                r_scope < 0 ? "n/a" : r_scope <= 0.8 ? fmt("met (%.0f%% of its time)", 100 * r_scope)
                                                     : fmt("not met (%.0f%% of its time)", 100 * r_scope)));
        row(fmt("″"), lat_str(&sb), fmt("fork+exec `/bin/true` + waitpid (floor): %s", lat_str(&sf)),
            ratio_str(med(&sb), med(&sf)), fmt("– (floor)"));
        row(fmt("″ split at the record's `started_at` (command exec'd, run.json written, before the readiness byte); "
                "medians (n=%zu)", s_exec.n),
            fmt("call → started_at %s; started_at → reply %s", ms_str(med(&s_exec)), ms_str(med(&s_reply))),
            fmt("–"), fmt("–"), fmt("–"));
        free(sb.v), free(sr.v), free(sp.v), free(ss.v), free(sf.v), free(s_exec.v), free(s_reply.v);
}
