/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 1: launch latency, bgrun's Launch interleaved with a raw
 * StartTransientUnit, a scope of a spawned process, systemd-run --scope and a
 * plain fork+exec; and whole processes: the `bgrun run` CLI against
 * systemd-run and sh. Run once with bgrund's state on ext4 and, when
 * tools/benchmark can move it, once more on tmpfs: every row shows both. */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stddef.h>
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

/* Every job the CLI started in this run's session: let it end, forget it
 * (untimed, so that the next round starts with no job). */
static void forget_cli_jobs(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = bgrun_call("ListJobs", CALL_TIMEOUT, &e, "s", session);
        if (!reply) {
                progress("ListJobs failed: %s", errmsg(&e));
                sd_bus_error_free(&e);
                return;
        }
        JobId ids[16];
        size_t n = 0;
        const char *id, *sess, *status, *command, *path;
        int r = sd_bus_message_enter_container(reply, 'a', "(sssso)");
        while (r >= 0 && n < ELEMENTSOF(ids) &&
               (r = sd_bus_message_read(reply, "(sssso)", &id, &sess, &status, &command, &path)) > 0)
                snprintf(ids[n++].s, sizeof ids->s, "%s", id);
        sd_bus_message_unref(reply);
        for (size_t i = 0; i < n; i++) {
                Rec rec;
                (void) record("Wait", ids[i].s, 30 * USEC_PER_SEC, &rec);
                (void) forget(ids[i].s);
        }
}

/* One pass of every launch measurement, interleaved, with the state where it is now. */
typedef struct Phase {
        const char *fs;
        Samples launch, raw_stu, raw_scope, sd_scope, fork_exec, to_exec, exec_to_reply;
        Samples cli_wait, cli_run, sd_wait, sh;
        size_t bad;
} Phase;

static void launch_phase(Phase *ph) {
        char *scope_argv[] = { (char *) "systemd-run", (char *) "--scope", (char *) "--quiet", (char *) "true", NULL };
        char *sd_wait_argv[] = { (char *) "systemd-run", (char *) "--wait", (char *) "--collect", (char *) "--quiet",
                                 (char *) "true", NULL };
        char *cli_wait_argv[] = { (char *) "bgrun", (char *) "run", (char *) "--session", session, (char *) "--wait",
                                  (char *) "--quiet", (char *) "true", NULL };
        char *cli_run_argv[] = { (char *) "bgrun", (char *) "run", (char *) "--session", session, (char *) "true", NULL };
        char *sh_argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "true", NULL };
        char *true_argv[] = { (char *) "/bin/true", NULL };

        ph->fs = state_fs();
        progress("1. launch latency, state on %s: %u rounds of bgrun Launch, raw StartTransientUnit, systemd-run "
                 "--scope, fork+exec, and whole processes: bgrun run [--wait], systemd-run --wait, sh -c "
                 "(interleaved, %u warm-up rounds)", ph->fs, S.launches, S.warmup);
        for (unsigned i = 0; i < S.warmup + S.launches; i++) {
                bool keep = i >= S.warmup;
                Rec rec;

                /* bgrun: Launch returns once the job runs. */
                if (!launch_round(keep, &ph->launch, &ph->to_exec, &ph->exec_to_reply, &rec))
                        ph->bad++;

                struct {
                        Samples *s;
                        double ms;
                } m[] = {
                        { &ph->raw_stu, raw_stu_once() },
                        { &ph->raw_scope, raw_scope_once() },
                        { &ph->sd_scope, run_timed(scope_argv) },
                        { &ph->fork_exec, run_timed(true_argv) },
                        { &ph->cli_wait, run_timed(cli_wait_argv) },
                        { &ph->cli_run, run_timed(cli_run_argv) },
                        { &ph->sd_wait, run_timed(sd_wait_argv) },
                        { &ph->sh, run_timed(sh_argv) },
                };
                for (size_t k = 0; keep && k < ELEMENTSOF(m); k++)
                        if (m[k].ms >= 0)
                                sample_add(m[k].s, m[k].ms);
                forget_cli_jobs();

                bus_drain();
                if (keep && (i - S.warmup + 1) % 50 == 0)
                        progress("  ... %u of %u rounds", i - S.warmup + 1, S.launches);
        }
        if (ph->bad)
                note(fmt("launch latency (state on %s): %zu of %u bgrun jobs failed or did not exit cleanly", ph->fs,
                         ph->bad, S.launches + S.warmup));
}

/* The cells of a row: one figure per phase, "ext4 …; tmpfs …". */
#define FIELD(f) offsetof(Phase, f)
static Samples *field(Phase *ph, size_t off) {
        return (Samples *) ((char *) ph + off);
}

static char *lat_cells(Phase *ph, size_t n, size_t off) {
        char *s = fmt("%s", "");
        for (size_t i = 0; i < n; i++)
                s = fmt("%s%s%s: %s", s, i ? "; " : "", ph[i].fs, lat_str(field(&ph[i], off)));
        return s;
}

static char *ratio_cells(Phase *ph, size_t n, size_t a, size_t b) {
        char *s = fmt("%s", "");
        for (size_t i = 0; i < n; i++)
                s = fmt("%s%s%s %s", s, i ? "; " : "", ph[i].fs, ratio_str(med(field(&ph[i], a)), med(field(&ph[i], b))));
        return s;
}

/* A goal "ratio ≤ limit", judged in each phase. */
static char *goal_cells(Phase *ph, size_t n, size_t a, size_t b, double limit) {
        char *s = fmt("≤ %.1fx:", limit);
        for (size_t i = 0; i < n; i++) {
                Samples *sa = field(&ph[i], a), *sb = field(&ph[i], b);
                const char *v = !sa->n || !sb->n ? "n/a" : med(sa) / med(sb) <= limit ? "met" : "not met";
                s = fmt("%s%s %s %s", s, i ? ";" : "", ph[i].fs, v);
        }
        return s;
}

void bench_launch(void) {
        Phase ph[2] = {};
        size_t n = 1;
        launch_phase(&ph[0]);
        if (storage_switchable()) {
                set_storage("tmpfs");
                launch_phase(&ph[1]);
                n = 2;
                /* The rest of the run on ext4 again, with a fresh state directory. */
                set_storage("ext4");
        } else
                note(fmt("bgrund's state directory stayed on %s for the whole run (no BGRUN_BENCH_TOOL)", ph[0].fs));

        char *what = fmt("Launch → job running, `true`, one connection, sequential; median / p99 (n=%u)", S.launches);
        char *b = lat_cells(ph, n, FIELD(launch));
        row(what, b,
            fmt("raw StartTransientUnit (Type=exec /bin/true) until its JobRemoved: %s", lat_cells(ph, n, FIELD(raw_stu))),
            ratio_cells(ph, n, FIELD(launch), FIELD(raw_stu)), goal_cells(ph, n, FIELD(launch), FIELD(raw_stu), 1.2));
        row(fmt("″"), b,
            fmt("posix_spawn + raw StartTransientUnit of a scope holding it, until its JobRemoved (the floor of "
                "bgrund's path, with no supervisor and no command): %s", lat_cells(ph, n, FIELD(raw_scope))),
            ratio_cells(ph, n, FIELD(launch), FIELD(raw_scope)), fmt("– (systemd's own cost)"));
        row(fmt("″"), b, fmt("`systemd-run --scope --quiet true`: %s", lat_cells(ph, n, FIELD(sd_scope))),
            ratio_cells(ph, n, FIELD(launch), FIELD(sd_scope)), goal_cells(ph, n, FIELD(launch), FIELD(sd_scope), 0.8));
        row(fmt("″"), b, fmt("fork+exec `/bin/true` + waitpid (floor): %s", lat_cells(ph, n, FIELD(fork_exec))),
            ratio_cells(ph, n, FIELD(launch), FIELD(fork_exec)), fmt("– (floor)"));
        char *split = fmt("%s", "");
        for (size_t i = 0; i < n; i++)
                split = fmt("%s%s%s: call → started_at %s; started_at → reply %s", split, i ? "; " : "", ph[i].fs,
                            ms_str(med(&ph[i].to_exec)), ms_str(med(&ph[i].exec_to_reply)));
        row(fmt("″ split at the record's `started_at` (command exec'd, run.json written, before the readiness byte); "
                "medians (n=%zu)", ph[0].to_exec.n),
            split, fmt("–"), fmt("–"), fmt("–"));

        /* Whole processes, as an agent calls them: exec, connect, work, exit. */
        char *w = lat_cells(ph, n, FIELD(cli_wait));
        row(fmt("whole process `bgrun run --wait --quiet true` (connect, Launch, wait for the end, output, exit); "
                "median / p99 (n=%u)", S.launches),
            w, fmt("`systemd-run --wait --collect --quiet true`: %s", lat_cells(ph, n, FIELD(sd_wait))),
            ratio_cells(ph, n, FIELD(cli_wait), FIELD(sd_wait)), goal_cells(ph, n, FIELD(cli_wait), FIELD(sd_wait), 0.5));
        row(fmt("″"), w, fmt("`systemd-run --scope --quiet true`: %s", lat_cells(ph, n, FIELD(sd_scope))),
            ratio_cells(ph, n, FIELD(cli_wait), FIELD(sd_scope)),
            goal_cells(ph, n, FIELD(cli_wait), FIELD(sd_scope), 0.7));
        row(fmt("″"), w, fmt("`sh -c true` (floor): %s", lat_cells(ph, n, FIELD(sh))),
            ratio_cells(ph, n, FIELD(cli_wait), FIELD(sh)), fmt("– (floor)"));
        char *r = lat_cells(ph, n, FIELD(cli_run));
        row(fmt("whole process `bgrun run true` (returns at Launch's answer); median / p99 (n=%u)", S.launches), r,
            fmt("`systemd-run --scope --quiet true`: %s", lat_cells(ph, n, FIELD(sd_scope))),
            ratio_cells(ph, n, FIELD(cli_run), FIELD(sd_scope)), fmt("–"));
        row(fmt("″"), r, fmt("`sh -c true` (floor): %s", lat_cells(ph, n, FIELD(sh))),
            ratio_cells(ph, n, FIELD(cli_run), FIELD(sh)), fmt("– (floor)"));
        /* The strings the table keeps are never freed (the run is short); the samples are. */
        for (size_t i = 0; i < n; i++) {
                Samples *all[] = { &ph[i].launch, &ph[i].raw_stu, &ph[i].raw_scope, &ph[i].sd_scope,
                                   &ph[i].fork_exec, &ph[i].to_exec, &ph[i].exec_to_reply, &ph[i].cli_wait,
                                   &ph[i].cli_run, &ph[i].sd_wait, &ph[i].sh };
                for (size_t k = 0; k < ELEMENTSOF(all); k++)
                        free(all[k]->v);
        }
}
