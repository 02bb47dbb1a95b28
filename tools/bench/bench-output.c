/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 4: output throughput, a job writing 1 GiB to stdout against
 * the same command writing a file itself. The job's output goes through its
 * supervisor (a pipe, spliced into the job's output file); for the two to
 * write the same, all of it must be kept: tools/benchmark raises
 * OutputMaxBytes= above 1 GiB, and a run whose output was cut counts for
 * nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench-common.h"

/* Whether the job's output file holds all of it, as the direct write does. */
static bool kept_whole(const char *id) {
        char path[128];
        struct stat st;
        snprintf(path, sizeof path, "/var/lib/bgrun/jobs/%s/output", id);
        return stat(path, &st) == 0 && (uint64_t) st.st_size == S.output_bytes;
}

static double best(const Samples *s) {
        double b = -1;
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i] > b)
                        b = s->v[i];
        return b;
}

/* What one side of the row needs free at a time: its whole output, plus
 * KeepFree= (bgrund cuts a job's output short of it) and some slack. */
#define OUTPUT_ROOM_SLACK (UINT64_C(1) << 30)

/* Free bytes on the state directory's file system, or 0. */
static uint64_t free_bytes(void) {
        struct statvfs st;
        return statvfs("/var/lib/bgrun", &st) == 0 ? (uint64_t) st.f_bavail * st.f_frsize : 0;
}

void bench_output(void) {
        uint64_t room = free_bytes(), need = S.output_bytes + OUTPUT_ROOM_SLACK;
        if (room < need) {
                /* Measured, a full file system makes both sides fail: say so
                 * rather than show a row of n/a. */
                progress("4. output: skipped: %.1f GiB free on the state directory's file system (%s), needs %.1f GiB",
                         (double) room / GIB, state_fs(), (double) need / GIB);
                row(fmt("Output: a job writing %.0f MiB to stdout", (double) S.output_bytes / MIB), fmt("n/a"),
                    fmt("no room: %.1f GiB free on %s, the row needs %.1f GiB", (double) room / GIB, state_fs(),
                        (double) need / GIB),
                    fmt("n/a"), fmt("≥ 0.9x: n/a (no room)"));
                return;
        }
        Samples sb = {}, sd = {}, pairs = {};
        double last_b = -1, last_d = -1;
        char *cmd = fmt("head -c %" PRIu64 " /dev/zero", S.output_bytes);
        char *direct = fmt("%s > %s", cmd, out_file);
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", direct, NULL };
        double mb = (double) S.output_bytes / MIB;

        progress("4. output: %u × a job writing %.0f MiB to stdout, and the same command writing a file "
                 "(alternating which goes first)", S.output_reps, mb);
        for (unsigned i = 0; i < 2 * S.output_reps; i++) {
                if ((i + i / 2) % 2 == 0) {
                        /* The reference: the command as a plain child of
                         * ours, writing the file itself, on the file system
                         * of bgrund's state directory. */
                        double ms = run_timed(argv);
                        struct stat st;
                        last_d = -1;
                        if (ms > 0 && stat(out_file, &st) == 0 && (uint64_t) st.st_size == S.output_bytes)
                                sample_add(&sd, last_d = mb / (ms / 1000));
                        else
                                progress("direct write: wrong size or failed");
                        unlink(out_file);
                        if (i % 2 == 1 && last_b > 0 && last_d > 0)
                                sample_add(&pairs, last_b / last_d);
                        continue;
                }
                JobId id;
                Rec rec;
                uint64_t t0 = now_ns();
                last_b = -1;
                if (!launch(cmd, &id, NULL))
                        continue;
                if (record("Wait", id.s, 600 * USEC_PER_SEC, &rec)) {
                        double ms = ms_since(t0);
                        if (streq(rec.status, "exited") && rec.output_bytes == S.output_bytes && kept_whole(id.s))
                                sample_add(&sb, last_b = mb / (ms / 1000));
                        else if (streq(rec.status, "exited") && rec.output_bytes == S.output_bytes)
                                progress("output job %s: not all of its output kept (OutputMaxBytes= below %" PRIu64
                                         "?): not comparable, not counted", id.s, S.output_bytes);
                        else
                                progress("output job %s: status %s, %" PRIu64 " bytes", id.s, rec.status,
                                         rec.output_bytes);
                }
                forget(id.s);
                if (i % 2 == 1 && last_b > 0 && last_d > 0)
                        sample_add(&pairs, last_b / last_d);
        }
        double b = med(&sb), d = med(&sd), pr = med(&pairs);
        /* Also here: a later part that fails takes the table with it. */
        progress("4. output: bgrun %.0f MiB/s (best %.0f), direct write %.0f MiB/s (best %.0f), "
                 "%.2fx (median of %zu pairs)", b, best(&sb), d, best(&sd), pr, pairs.n);
        row(fmt("Output: a job writing %.0f MiB to stdout, Launch → Wait returns; median (best) of %zu", mb, sb.n),
            b > 0 ? fmt("%.0f MiB/s (%.0f)", b, best(&sb)) : fmt("n/a"),
            d > 0 ? fmt("`%s > FILE` as a plain child, both on %s: %.0f MiB/s (%.0f)", cmd, state_fs(), d, best(&sd))
                  : fmt("n/a"),
            pr > 0 ? fmt("%.2fx (median of %zu back-to-back pairs; of medians %s, of bests %s)", pr, pairs.n,
                         ratio_str(b, d), ratio_str(best(&sb), best(&sd)))
                   : fmt("n/a"),
            fmt("≥ 0.9x: %s", pr > 0 ? (pr >= 0.9 ? "met" : "not met") : "n/a"));
        free(sb.v), free(sd.v), free(pairs.v), free(cmd), free(direct);
}
