/* SPDX-License-Identifier: MIT */
#pragma once

/* What the files of bgrun-bench share: the names on the bus, the run's sizes
 * and state, and the helpers that more than one measurement uses. Each
 * section names the file that holds it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#define BGRUN_NAME "org.bgrun.Runtime1"
#define BGRUN_PATH "/org/bgrun/Runtime1"
#define BGRUN_IFACE "org.bgrun.Runtime1.Manager"
#define SD_NAME "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_IFACE "org.freedesktop.systemd1.Manager"

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define CALL_TIMEOUT (60 * USEC_PER_SEC)
#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

#define streq(a, b) (strcmp((a), (b)) == 0)
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* --- bench.c: sizes, state, the results table -------------------------- */

typedef struct Sizes {
        unsigned launches;        /* 1: sequential launches, each reference too */
        unsigned warmup;
        unsigned throughput;      /* 2: jobs per throughput run */
        unsigned parallel;        /*    in flight in the parallel runs */
        unsigned kills;           /* 3: kills of each size */
        unsigned output_reps;     /* 4: 1 GiB writes, each way */
        uint64_t output_bytes;
        unsigned running;         /* 5: jobs running for the per-job memory */
        unsigned finished_a;      /* 5: finished jobs, first and second mark */
        unsigned finished_b;
        unsigned memory_parallel; /*    launches in flight to get there */
        unsigned small_records;   /* 6: Get/ListJobs at few records ... */
        unsigned get_calls;       /*    calls of each */
        double list_budget_s;     /*    ListJobs at many records: time budget */
} Sizes;

extern Sizes S;
extern bool quick;
/* --cgroupfs: a container's setting, bgrund --listen's socket, no systemd */
extern bool cgroupfs_mode;
#define LISTEN_ADDRESS "unix:path=/run/bgrun/bus"

extern char session[64];      /* every job of this run carries it */
extern char unit_prefix[64];  /* every transient unit of this run starts with it */
extern char my_cgroup[1200];  /* this process's cgroup (v2 path) */
extern char out_file[256];    /* the direct-write reference's file */

void cleanup(void);

/* One row of the table, and a note below it; they take the strings. */
void row(char *what, char *bgrun_cell, char *ref, char *ratio, char *goal);
void note(char *s);

/* --- bench-util.c: messages, time, statistics, child processes --------- */

void progress(const char *fmt, ...) _printf_(1, 2);
_Noreturn void die(const char *fmt, ...) _printf_(1, 2);
char *fmt(const char *f, ...) _printf_(1, 2);
void *xcalloc(size_t n, size_t size);

uint64_t now_ns(void);
uint64_t now_rt_usec(void);
double ms_since(uint64_t t0);
double s_since(uint64_t t0);

typedef struct Samples {
        double *v;
        size_t n, cap;
} Samples;

void sample_add(Samples *s, double x);
double pct(Samples *s, double p);
double med(Samples *s);
double p99(Samples *s);
char *ms_str(double ms);
char *lat_str(Samples *s);
char *ratio_str(double a, double b);

/* Where bgrund's state directory is: "ext4", "tmpfs" (or another file
 * system's magic in hex), read from /var/lib/bgrun itself. */
const char *state_fs(void);
/* tools/benchmark gives the means to move it (BGRUN_BENCH_TOOL); without it,
 * the run stays where the sandbox put it (its tmpfs). */
bool storage_switchable(void);
/* Restart bgrund with a fresh state directory of KIND ("ext4", "tmpfs"). */
void set_storage(const char *kind);

pid_t spawn(char *const argv[], int *ret_pidfd);
int reap(pid_t pid);
double run_timed(char *const argv[]);

/* --- bench-bus.c: the connection, signals, waiting, calls to bgrund ---- */

extern sd_bus *bus;

void bus_connect(void);
void bgrun_subscribe(void);
const char *bgrun_job_ended(const char *id);
const char *sd_job_removed(const char *job);
bool sd_unit_removed(const char *unit);
void bus_step(uint64_t max_usec);
void bus_drain(void);
void wait_bus_and(const int *fds, size_t nfds, uint64_t max_usec);
sd_bus_message *bgrun_call(const char *member, uint64_t timeout_usec, sd_bus_error *error,
                           const char *types, ...);
const char *errmsg(const sd_bus_error *e);

/* --- bench-jobs.c: bgrun's jobs and their records ---------------------- */

typedef struct Rec {
        char status[32];
        uint64_t output_bytes;
        char cgroup[512];
        int dead;
        int killed;
        uint64_t started_at;   /* realtime µs */
        uint64_t confirmed_at; /* realtime µs */
} Rec;

typedef struct JobId {
        char s[32];
} JobId;

int read_rec(sd_bus_message *m, Rec *rec);
bool launch(const char *command, JobId *ret, double *ret_ms);
bool record(const char *member, const char *id, uint64_t timeout_usec, Rec *rec);
bool forget(const char *id);
/* One timed Launch of `true`, then its end (Wait) and Forget, untimed, so
 * rounds do not overlap. With keep, the Launch's time goes to s_launch and
 * its split at the record's started_at to s_exec and s_reply. False when it
 * failed or did not exit cleanly; *ret_rec is its final record. */
bool launch_round(bool keep, Samples *s_launch, Samples *s_exec, Samples *s_reply, Rec *ret_rec);
size_t batch(const char *member, const JobId *ids, size_t n, unsigned par);
double launch_many(const char *command, size_t n, unsigned par, JobId *ids, bool wait_end,
                   size_t *ret_failed);
/* The same, each with Queue and MaxParallel=max_parallel in the run's
 * session, par Launches in flight, until all ended. */
double launch_many_queued(const char *command, size_t n, unsigned par, uint32_t max_parallel, JobId *ids,
                          size_t *ret_failed);
pid_t bgrund_pid(void);
uint32_t running_jobs(void);
void wait_no_running(void);

/* --- bench-units.c: systemd's transient units, the references ---------- */

/* One transient unit of this run, started by stu_send() or by systemd-run;
 * the path of its start job (StartTransientUnit's reply) goes into job. */
typedef struct Unit {
        char *name;
        char job[256];
        int state; /* 0 not sent, 1 sent, 2 job queued, 3 started, 4 failed */
        pid_t pid; /* systemd-run runs */
        int pidfd;
} Unit;

char *next_unit_name(const char *suffix);
void stu_send(Unit *u, pid_t scope_pid);
bool unit_started(Unit *u);
bool unit_removed(const Unit *u);
bool wait_unit_removed(const Unit *u, double timeout_s);

/* --- bench-memory.c: memory use from /proc ----------------------------- */

long rss_kb(pid_t pid);

/* --- the measurements, one file each, in the order they run ------------ */

void bench_launch(void);              /* bench-launch.c */
void bench_throughput(void);          /* bench-throughput.c */
void bench_kill(void);                /* bench-kill.c */
void bench_output(void);              /* bench-output.c */
void bench_running_memory(void);      /* bench-memory.c */
void bench_records(void);             /* bench-records.c */
void bench_queue(void);               /* bench-queue.c */
void bench_launch_cgroupfs(void);     /* bench-cgroupfs.c */
void bench_kill_cgroupfs(void);       /* bench-kill.c */
