/* SPDX-License-Identifier: MIT */
/* bgrun-bench --cgroupfs: launch latency where there is no systemd (a
 * container's setting): bgrun's Launch over bgrund --listen's socket until
 * the job runs in the cgroup bgrund made for it, interleaved with a plain
 * fork+exec of /bin/true + waitpid, the floor of any launcher. */
#include <stdlib.h>
#include <string.h>

#include "bench-common.h"

void bench_launch_cgroupfs(void) {
        Samples sb = {}, sf = {}, s_exec = {}, s_reply = {};
        char *true_argv[] = { (char *) "/bin/true", NULL };
        size_t bad = 0;

        progress("cgroupfs launch latency: %u rounds of bgrun Launch and fork+exec (interleaved, %u warm-up rounds)",
                 S.launches, S.warmup);
        for (unsigned i = 0; i < S.warmup + S.launches; i++) {
                bool keep = i >= S.warmup;
                double ms;
                Rec rec;

                /* Launch returns once the job runs (the same interval as the
                 * systemd rows). */
                if (!launch_round(keep, &sb, &s_exec, &s_reply, &rec) || strncmp(rec.cgroup, "/bgrun-job-", 11) != 0)
                        bad++;

                /* An agent's pause between commands, untimed: bgrund starts
                 * its next supervisors ahead of time in such pauses (20 ms
                 * without a Launch), and the reference runs on a quiet
                 * machine. */
                usleep(30 * 1000);
                ms = run_timed(true_argv);
                if (keep && ms >= 0)
                        sample_add(&sf, ms);
                if (keep && (i - S.warmup + 1) % 50 == 0)
                        progress("  ... %u of %u rounds", i - S.warmup + 1, S.launches);
        }
        if (bad)
                note(fmt("cgroupfs launch latency: %zu of %u jobs failed, did not exit cleanly or were not cgroupfs", bad,
                         S.launches + S.warmup));
        double r = sf.n && sb.n ? med(&sb) / med(&sf) : -1;
        row(fmt("cgroupfs: Launch → job running, `true`, one peer-to-peer connection, sequential, 30 ms apart; "
                "median / p99 (n=%u)",
                S.launches),
            lat_str(&sb), fmt("fork+exec `/bin/true` + waitpid (floor): %s", lat_str(&sf)),
            fmt("%s (p99 %s)", ratio_str(med(&sb), med(&sf)), ratio_str(p99(&sb), p99(&sf))),
            fmt("≤ 2x: %s; stretch ≤ 1.3x: %s", r < 0 ? "n/a" : r <= 2 ? "met" : "not met",
                r < 0 ? "n/a" : r <= 1.3 ? "met" : "not met"));
        row(fmt("″ split at the record's `started_at` (command exec'd, run.json written, before the readiness byte); "
                "medians (n=%zu)", s_exec.n),
            fmt("call → started_at %s; started_at → reply %s", ms_str(med(&s_exec)), ms_str(med(&s_reply))),
            fmt("–"), fmt("–"), fmt("–"));
        free(sb.v), free(sf.v), free(s_exec.v), free(s_reply.v);
}
