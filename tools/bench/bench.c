/* SPDX-License-Identifier: MIT */
/*
 * bgrun-bench: bgrun's figures next to references measured in the same run
 * (issue #6). It runs inside the private systemd of tools/sandbox (use
 * tools/benchmark), as root, on the system bus. The machines are shared and
 * noisy: absolute times say little, ratios within one run say a lot, so every
 * bgrun figure is taken interleaved with, or right next to, its reference.
 *
 *   bgrun-bench [--quick]
 *
 * Progress goes to stderr, the result to stdout as a Markdown table.
 * Everything it creates is removed before it exits: its jobs are forgotten
 * (all of them carry the session "bgrun-bench-PID"), its transient units use
 * CollectMode=inactive-or-failed, its files and cgroup are deleted.
 *
 * This file holds the sizes, the run's state, the results table and main();
 * each measurement has a file of its own (bench-common.h lists them all).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench-common.h"

/* --- sizes ------------------------------------------------------------- */

static const Sizes full_sizes = {
        .launches = 300, .warmup = 5,
        .throughput = 500, .parallel = 32,
        .kills = 50,
        .output_reps = 7, .output_bytes = UINT64_C(1) << 30,
        .running = 200,
        .finished_a = 1000, .finished_b = 5000, .memory_parallel = 16,
        .small_records = 10, .get_calls = 200, .list_budget_s = 20,
};

static const Sizes quick_sizes = {
        .launches = 30, .warmup = 2,
        .throughput = 50, .parallel = 32,
        .kills = 5,
        .output_reps = 2, .output_bytes = UINT64_C(1) << 30,
        .running = 20,
        .finished_a = 100, .finished_b = 200, .memory_parallel = 16,
        .small_records = 10, .get_calls = 50, .list_budget_s = 5,
};

Sizes S;
bool quick;
bool cgroupfs_mode;

/* --- state ------------------------------------------------------------- */

char session[64];
char unit_prefix[64];
char my_cgroup[1200];
char out_file[256];

/* --- the results table ------------------------------------------------- */

typedef struct Row {
        char *what, *bgrun, *ref, *ratio, *goal;
} Row;

static Row rows[64];
static size_t n_rows;

void row(char *what, char *bgrun_cell, char *ref, char *ratio, char *goal) {
        if (n_rows < ELEMENTSOF(rows))
                rows[n_rows++] = (Row) { what, bgrun_cell, ref, ratio, goal };
}

static char *notes[32];
static size_t n_notes;

void note(char *s) {
        if (n_notes < ELEMENTSOF(notes))
                notes[n_notes++] = s;
        progress("note: %s", s);
}

/* --- setup and cleanup ------------------------------------------------- */

/* Kill and forget every job of this run's session; remove our files. */
void cleanup(void) {
        static bool done;
        if (done || !bus)
                return;
        done = true;
        if (out_file[0])
                unlink(out_file);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = bgrun_call("ListJobs", CALL_TIMEOUT, &e, "s", session);
        if (!reply) {
                sd_bus_error_free(&e);
                return;
        }
        JobId *ids = NULL;
        size_t n = 0, cap = 0;
        const char *id, *sess, *status, *command, *path;
        int r = sd_bus_message_enter_container(reply, 'a', "(sssso)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sssso)", &id, &sess, &status, &command, &path)) > 0) {
                if (n == cap) {
                        cap = cap ? 2 * cap : 64;
                        ids = realloc(ids, cap * sizeof(JobId));
                        if (!ids)
                                abort();
                }
                snprintf(ids[n++].s, sizeof ids->s, "%s", id);
        }
        sd_bus_message_unref(reply);
        if (n) {
                progress("cleanup: %zu jobs of this run left; killing and forgetting them", n);
                batch("Kill", ids, n, 32);
                batch("Forget", ids, n, 64);
        }
        free(ids);
}

static void setup(void) {
        snprintf(session, sizeof session, "bgrun-bench-%d", (int) getpid());
        snprintf(unit_prefix, sizeof unit_prefix, "bgrun-bench-%d-", (int) getpid());
        /* Beside bgrund's state, where a job's output goes: the same file
         * system for both sides of the output row. */
        snprintf(out_file, sizeof out_file, "/var/lib/bgrun/bgrun-bench-%d.out", (int) getpid());

        bus_connect();

        FILE *f = fopen("/proc/self/cgroup", "re");
        char line[1100];
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = '\0';
                        snprintf(my_cgroup, sizeof my_cgroup, "%s", line + 3);
                }
        if (f)
                fclose(f);
}

static char *property_s(const char *dest, const char *path, const char *iface, const char *name) {
        char *s = NULL;
        if (sd_bus_get_property_string(bus, dest, path, iface, name, NULL, &s) < 0)
                return fmt("?");
        return s;
}

static void on_signal(int sig) {
        /* The table is lost, but nothing is left behind. */
        (void) sig;
        cleanup();
        _exit(130);
}

/* The full run's phases, in order; --only runs one. */
static const struct {
        const char *name;
        void (*run)(void);
} phases[] = {
        { "launch", bench_launch }, { "throughput", bench_throughput }, { "kill", bench_kill },
        { "output", bench_output }, { "memory", bench_running_memory }, { "records", bench_records },
        { "queue", bench_queue },
};

static bool phase_known(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(phases); i++)
                if (streq(name, phases[i].name))
                        return true;
        return false;
}

int main(int argc, char *argv[]) {
        static const struct option opts[] = {
                { "quick", no_argument, NULL, 'q' },
                { "cgroupfs", no_argument, NULL, 'c' },
                { "only", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;
        const char *only = NULL;
        while ((c = getopt_long(argc, argv, "qco:h", opts, NULL)) >= 0)
                switch (c) {
                case 'q':
                        quick = true;
                        break;
                case 'c':
                        cgroupfs_mode = true;
                        break;
                case 'o':
                        only = optarg;
                        break;
                case 'h':
                        printf("usage: %s [--quick] [--cgroupfs] [--only PHASE]\n"
                               "Runs bgrun's benchmarks against references measured in the same run and prints\n"
                               "a Markdown table. Needs root and a bgrund on the system bus: use tools/benchmark.\n"
                               "--cgroupfs: only the launch row, against bgrund --listen where there is no\n"
                               "systemd (tools/sandbox --no-systemd, the cgroupfs mechanism).\n"
                               "--only PHASE: one phase of the full run, to work on it: launch, throughput,\n"
                               "kill, output, memory, records or queue.\n",
                               argv[0]);
                        return 0;
                default:
                        fprintf(stderr, "usage: %s [--quick] [--cgroupfs] [--only PHASE]\n", argv[0]);
                        return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
                return 2;
        }
        if (only && !phase_known(only)) {
                fprintf(stderr, "%s: no phase '%s' (launch, throughput, kill, output, memory, records, queue)\n", argv[0], only);
                return 2;
        }
        S = quick ? quick_sizes : full_sizes;
        setvbuf(stderr, NULL, _IOLBF, 0);

        setup();
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);

        uint64_t t_start = now_ns();
        if (cgroupfs_mode) {
                char *version = property_s(BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Version");
                progress("bgrun %s in a container's setting (cgroupfs); %s run", version, quick ? "quick" : "full-size");
                bench_launch_cgroupfs();
                bench_kill_cgroupfs();
                cleanup();
                struct utsname u;
                uname(&u);
                printf("bgrun %s, containment cgroupfs, in tools/sandbox --no-systemd (PID 1 a reaping init, no bus, "
                       "bgrund --listen; one peer-to-peer connection), kernel %s, %ld CPUs; %.0f s.\n\n",
                       version, u.release, sysconf(_SC_NPROCESSORS_ONLN), s_since(t_start));
                printf("| what | bgrun | reference | ratio | goal |\n");
                printf("| --- | --- | --- | --- | --- |\n");
                for (size_t i = 0; i < n_rows; i++)
                        printf("| %s | %s | %s | %s | %s |\n", rows[i].what, rows[i].bgrun, rows[i].ref, rows[i].ratio,
                               rows[i].goal);
                for (size_t i = 0; i < n_notes; i++)
                        printf("- %s\n", notes[i]);
                fflush(stdout);
                sd_bus_flush_close_unref(bus);
                return 0;
        }
        /* bgrund's records on a real disk, where fsync costs what it costs. */
        if (storage_switchable())
                set_storage("ext4");
        pid_t dpid = bgrund_pid();
        long rss_fresh = rss_kb(dpid);
        char *version = property_s(BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Version");
        char *mode = property_s(BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "ContainmentMode");
        char *sd_version = property_s(SD_NAME, SD_PATH, SD_IFACE, "Version");
        progress("bgrun %s (%s), systemd %s, bgrund pid %d, RSS %.1f MiB; %s run", version, mode, sd_version,
                 (int) dpid, rss_fresh / KIB, quick ? "quick" : "full-size");

        for (size_t i = 0; i < ELEMENTSOF(phases); i++)
                if (!only || streq(only, phases[i].name))
                        phases[i].run();
        cleanup();

        struct utsname u;
        uname(&u);
        time_t now = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        printf("### bgrun benchmark%s\n\n", quick ? " (--quick: small counts, not for comparison)" : "");
        printf("bgrun %s (containment %s) in a private systemd %s with dbus-daemon (tools/sandbox), "
               "kernel %s, %ld CPUs, %s; %.0f s. bgrund RSS at start (no job yet): %.1f MiB. "
               "bgrund's state directory on %s%s.\n\n",
               version, mode, sd_version, u.release, ncpu, date, s_since(t_start), rss_fresh / KIB, state_fs(),
               storage_switchable() ? " (launch rows: also on tmpfs)" : "");
        printf("| what | bgrun | reference | ratio | goal |\n");
        printf("| --- | --- | --- | --- | --- |\n");
        for (size_t i = 0; i < n_rows; i++)
                printf("| %s | %s | %s | %s | %s |\n", rows[i].what, rows[i].bgrun, rows[i].ref, rows[i].ratio,
                       rows[i].goal);
        printf("\nratio = bgrun ÷ reference: for times lower is better, for rates (jobs/s, MiB/s) higher is better. "
               "Times are medians / p99 in ms. ″ = same measurement as the row above.\n");
        for (size_t i = 0; i < n_notes; i++)
                printf("- %s\n", notes[i]);
        fflush(stdout);
        sd_bus_flush_close_unref(bus);
        return 0;
}
