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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

extern char **environ;

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

#define streq(a, b) (strcmp((a), (b)) == 0)
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* --- sizes ------------------------------------------------------------- */

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

static Sizes S;
static bool quick;

/* --- state ------------------------------------------------------------- */

static sd_bus *bus;
static char session[64];      /* every job of this run carries it */
static char unit_prefix[64];  /* every transient unit of this run starts with it */
static unsigned unit_counter;
static char my_cgroup[1200];  /* this process's cgroup (v2 path) */
static char out_file[256];    /* the direct-write reference's file */

/* --- messages ---------------------------------------------------------- */

static void progress(const char *fmt, ...) _printf_(1, 2);
static void progress(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("bgrun-bench: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static void cleanup(void);

static _Noreturn void die(const char *fmt, ...) _printf_(1, 2);
static _Noreturn void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("bgrun-bench: fatal: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        cleanup();
        exit(1);
}

static char *fmt(const char *f, ...) _printf_(1, 2);
static char *fmt(const char *f, ...) {
        va_list ap;
        char *s;
        va_start(ap, f);
        if (vasprintf(&s, f, ap) < 0)
                abort();
        va_end(ap);
        return s;
}

static void *xcalloc(size_t n, size_t size) {
        void *p = calloc(n ? n : 1, size);
        if (!p)
                abort();
        return p;
}

/* --- time and statistics ----------------------------------------------- */

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

/* CLOCK_REALTIME in µs, to compare with the record's timestamps. */
static uint64_t now_rt_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static double ms_since(uint64_t t0) {
        return (double) (now_ns() - t0) / 1e6;
}

static double s_since(uint64_t t0) {
        return (double) (now_ns() - t0) / 1e9;
}

typedef struct Samples {
        double *v;
        size_t n, cap;
} Samples;

static void sample_add(Samples *s, double x) {
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
static double pct(Samples *s, double p) {
        if (s->n == 0)
                return -1;
        qsort(s->v, s->n, sizeof(double), cmp_double);
        double rank = p / 100.0 * (double) (s->n - 1);
        size_t lo = (size_t) rank, hi = lo + 1 < s->n ? lo + 1 : lo;
        return s->v[lo] + (s->v[hi] - s->v[lo]) * (rank - (double) lo);
}

static double med(Samples *s) {
        return pct(s, 50);
}

static double p99(Samples *s) {
        return pct(s, 99);
}

/* "12.3 ms" with enough digits for small values. */
static char *ms_str(double ms) {
        if (ms < 0)
                return fmt("n/a");
        if (ms < 1)
                return fmt("%.3f ms", ms);
        if (ms < 10)
                return fmt("%.2f ms", ms);
        return fmt("%.1f ms", ms);
}

static char *lat_str(Samples *s) {
        if (s->n == 0)
                return fmt("n/a");
        return fmt("%s / %s", ms_str(med(s)), ms_str(p99(s)));
}

/* --- a set of strings (job ids, job paths, unit names) ------------------ */

typedef struct StrSet {
        char **keys;
        char **vals;
        size_t n, cap;
} StrSet;

static uint64_t hash_str(const char *s) {
        uint64_t h = UINT64_C(1469598103934665603);
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * UINT64_C(1099511628211);
        return h;
}

static void set_put(StrSet *set, const char *k, const char *v);

static void set_grow(StrSet *set) {
        StrSet old = *set;
        set->cap = old.cap ? 2 * old.cap : 1024;
        set->n = 0;
        set->keys = xcalloc(set->cap, sizeof(char *));
        set->vals = xcalloc(set->cap, sizeof(char *));
        for (size_t i = 0; i < old.cap; i++)
                if (old.keys[i]) {
                        set_put(set, old.keys[i], old.vals[i]);
                        free(old.keys[i]);
                        free(old.vals[i]);
                }
        free(old.keys);
        free(old.vals);
}

static void set_put(StrSet *set, const char *k, const char *v) {
        if (2 * (set->n + 1) > set->cap)
                set_grow(set);
        size_t i = hash_str(k) & (set->cap - 1);
        while (set->keys[i] && !streq(set->keys[i], k))
                i = (i + 1) & (set->cap - 1);
        if (set->keys[i]) {
                free(set->vals[i]);
        } else {
                set->keys[i] = strdup(k);
                set->n++;
        }
        set->vals[i] = strdup(v ? v : "");
        if (!set->keys[i] || !set->vals[i])
                abort();
}

static const char *set_get(const StrSet *set, const char *k) {
        if (!set->cap)
                return NULL;
        size_t i = hash_str(k) & (set->cap - 1);
        while (set->keys[i]) {
                if (streq(set->keys[i], k))
                        return set->vals[i];
                i = (i + 1) & (set->cap - 1);
        }
        return NULL;
}

/* bgrund's JobRemoved: id → status. systemd's JobRemoved of our units: job
 * path → result. systemd's UnitRemoved of our units: unit name. */
static StrSet bgrun_ended, sd_jobs_removed, sd_units_removed;

/* --- the bus ----------------------------------------------------------- */

static int on_bgrun_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *id, *path, *status;
        if (sd_bus_message_read(m, "sos", &id, &path, &status) >= 0)
                set_put(&bgrun_ended, id, status);
        return 0;
}

static int on_sd_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t id;
        const char *path, *unit, *result;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) >= 0 &&
            strncmp(unit, unit_prefix, strlen(unit_prefix)) == 0)
                set_put(&sd_jobs_removed, path, result);
        return 0;
}

static int on_sd_unit_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *unit, *path;
        if (sd_bus_message_read(m, "so", &unit, &path) >= 0 && strncmp(unit, unit_prefix, strlen(unit_prefix)) == 0)
                set_put(&sd_units_removed, unit, "");
        return 0;
}

/* Dispatch what is queued; if nothing was, wait for the bus at most max_usec. */
static void bus_step(uint64_t max_usec) {
        int r = sd_bus_process(bus, NULL);
        if (r < 0)
                die("processing the bus failed: %s", strerror(-r));
        if (r > 0)
                return;
        r = sd_bus_wait(bus, max_usec);
        if (r < 0 && r != -EINTR)
                die("waiting on the bus failed: %s", strerror(-r));
}

static void bus_drain(void) {
        int r;
        while ((r = sd_bus_process(bus, NULL)) > 0)
                ;
        if (r < 0)
                die("processing the bus failed: %s", strerror(-r));
}

/* Wait for the bus or any of fds (pidfds) at most max_usec. */
static void wait_bus_and(const int *fds, size_t nfds, uint64_t max_usec) {
        struct pollfd p[1 + 64];
        size_t n = 0;
        bus_drain();
        int events = sd_bus_get_events(bus);
        if (events < 0)
                die("bus: %s", strerror(-events));
        p[n++] = (struct pollfd) { .fd = sd_bus_get_fd(bus), .events = (short) events };
        for (size_t i = 0; i < nfds && n < ELEMENTSOF(p); i++)
                if (fds[i] >= 0)
                        p[n++] = (struct pollfd) { .fd = fds[i], .events = POLLIN };
        uint64_t until, timeout_usec = max_usec;
        if (sd_bus_get_timeout(bus, &until) >= 0 && until != UINT64_MAX) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                uint64_t now = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
                uint64_t left = until > now ? until - now : 0;
                if (left < timeout_usec)
                        timeout_usec = left;
        }
        int timeout_ms = (int) ((timeout_usec + 999) / 1000);
        if (poll(p, n, timeout_ms) < 0 && errno != EINTR)
                die("poll: %m");
}

/* Call a Manager method of bgrund; NULL and *error set on failure. */
static sd_bus_message *bgrun_call(const char *member, uint64_t timeout_usec, sd_bus_error *error,
                                  const char *types, ...) {
        sd_bus_message *m = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, member);
        if (r >= 0 && types) {
                va_list ap;
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r < 0)
                die("building %s: %s", member, strerror(-r));
        r = sd_bus_call(bus, m, timeout_usec, error, &reply);
        sd_bus_message_unref(m);
        return r < 0 ? NULL : reply;
}

static const char *errmsg(const sd_bus_error *e) {
        return e->message ? e->message : e->name ? e->name : "unknown error";
}

/* --- the job record ---------------------------------------------------- */

typedef struct Rec {
        char status[32];
        uint64_t output_bytes;
        char cgroup[512];
        int dead;
        int killed;
        uint64_t started_at;   /* realtime µs */
        uint64_t confirmed_at; /* realtime µs */
} Rec;

/* Walk an a{sv} (the record, or Kill's reply) and pick out what we use;
 * nested a{sv} (containment, teardown) are walked the same way. */
static int read_rec(sd_bus_message *m, Rec *rec) {
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *contents, *s;
                r = sd_bus_message_read(m, "s", &key);
                if (r >= 0)
                        r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                if (streq(key, "status") && streq(contents, "s")) {
                        r = sd_bus_message_read(m, "v", "s", &s);
                        if (r >= 0)
                                snprintf(rec->status, sizeof rec->status, "%s", s);
                } else if (streq(key, "cgroup") && streq(contents, "s")) {
                        r = sd_bus_message_read(m, "v", "s", &s);
                        if (r >= 0)
                                snprintf(rec->cgroup, sizeof rec->cgroup, "%s", s);
                } else if (streq(key, "output_bytes") && streq(contents, "t"))
                        r = sd_bus_message_read(m, "v", "t", &rec->output_bytes);
                else if (streq(key, "started_at") && streq(contents, "t"))
                        r = sd_bus_message_read(m, "v", "t", &rec->started_at);
                else if (streq(key, "confirmed_at") && streq(contents, "t"))
                        r = sd_bus_message_read(m, "v", "t", &rec->confirmed_at);
                else if (streq(key, "dead") && streq(contents, "b"))
                        r = sd_bus_message_read(m, "v", "b", &rec->dead);
                else if (streq(key, "killed") && streq(contents, "b"))
                        r = sd_bus_message_read(m, "v", "b", &rec->killed);
                else if (streq(contents, "a{sv}")) {
                        r = sd_bus_message_enter_container(m, 'v', "a{sv}");
                        if (r >= 0)
                                r = read_rec(m, rec);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                } else
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* --- bgrun operations -------------------------------------------------- */

typedef struct JobId {
        char s[32];
} JobId;

static bool launch(const char *command, JobId *ret, double *ret_ms) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        uint64_t t0 = now_ns();
        sd_bus_message *reply = bgrun_call("Launch", CALL_TIMEOUT, &e, "sssa{sv}", command, session, "/", 0);
        double ms = ms_since(t0);
        if (!reply) {
                progress("Launch failed: %s", errmsg(&e));
                sd_bus_error_free(&e);
                return false;
        }
        const char *id, *path;
        int r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                die("Launch: unexpected reply: %s", strerror(-r));
        snprintf(ret->s, sizeof ret->s, "%s", id);
        sd_bus_message_unref(reply);
        if (ret_ms)
                *ret_ms = ms;
        return true;
}

/* Get (timeout 0) or Wait for the job's end. */
static bool record(const char *member, const char *id, uint64_t timeout_usec, Rec *rec) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply;
        *rec = (Rec) {};
        if (streq(member, "Wait"))
                reply = bgrun_call("Wait", timeout_usec + CALL_TIMEOUT, &e, "st", id, timeout_usec);
        else
                reply = bgrun_call("Get", CALL_TIMEOUT, &e, "s", id);
        if (!reply) {
                progress("%s %s failed: %s", member, id, errmsg(&e));
                sd_bus_error_free(&e);
                return false;
        }
        int r = read_rec(reply, rec);
        sd_bus_message_unref(reply);
        if (r < 0)
                die("%s: unexpected reply: %s", member, strerror(-r));
        return true;
}

static bool forget(const char *id) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = bgrun_call("Forget", CALL_TIMEOUT, &e, "s", id);
        if (!reply) {
                progress("Forget %s failed: %s", id, errmsg(&e));
                sd_bus_error_free(&e);
                return false;
        }
        sd_bus_message_unref(reply);
        return true;
}

/* Many calls of METHOD(s id), at most `par` in flight. */
typedef struct Batch {
        unsigned inflight;
        size_t errors;
        char first_error[256];
} Batch;

static int on_batch_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Batch *b = userdata;
        b->inflight--;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e) {
                if (!b->errors++)
                        snprintf(b->first_error, sizeof b->first_error, "%s", errmsg(e));
        }
        return 0;
}

static size_t batch(const char *member, const JobId *ids, size_t n, unsigned par) {
        Batch b = {};
        size_t next = 0;
        while (next < n || b.inflight > 0) {
                while (next < n && b.inflight < par) {
                        const char *id = ids[next++].s;
                        if (!*id)
                                continue;
                        int r = sd_bus_call_method_async(bus, NULL, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, member,
                                                         on_batch_reply, &b, "s", id);
                        if (r < 0)
                                die("%s: %s", member, strerror(-r));
                        b.inflight++;
                }
                bus_step(USEC_PER_SEC);
        }
        if (b.errors)
                progress("%zu of %zu %s calls failed, first: %s", b.errors, n, member, b.first_error);
        return b.errors;
}

/* Launch n jobs of `command`, at most `par` Launch calls in flight; with
 * wait_end, until all of them have ended (bgrund's JobRemoved). Returns the
 * seconds from the first call, or -1 if something did not finish. */
typedef struct Launcher {
        JobId *ids;
        unsigned inflight;
        size_t replied, failed;
} Launcher;

typedef struct LaunchReq {
        Launcher *l;
        size_t idx;
} LaunchReq;

static int on_launch_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        LaunchReq *q = userdata;
        Launcher *l = q->l;
        const char *id, *path;
        l->inflight--;
        l->replied++;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e || sd_bus_message_read(m, "so", &id, &path) < 0) {
                if (!l->failed++)
                        progress("Launch failed: %s", e ? errmsg(e) : "bad reply");
                l->ids[q->idx].s[0] = '\0';
        } else
                snprintf(l->ids[q->idx].s, sizeof l->ids[q->idx].s, "%s", id);
        return 0;
}

static size_t count_ended(const JobId *ids, size_t n, size_t *failed) {
        size_t ended = 0;
        for (size_t i = 0; i < n; i++) {
                if (!ids[i].s[0]) {
                        ended++;
                        continue;
                }
                const char *st = set_get(&bgrun_ended, ids[i].s);
                if (st) {
                        ended++;
                        if (failed && !streq(st, "exited"))
                                (*failed)++;
                }
        }
        return ended;
}

static double launch_many(const char *command, size_t n, unsigned par, JobId *ids, bool wait_end,
                          size_t *ret_failed) {
        Launcher l = { .ids = ids };
        LaunchReq *reqs = xcalloc(n, sizeof(LaunchReq));
        size_t next = 0, done_from = 0;
        uint64_t t0 = now_ns(), last_note = t0;
        double deadline_s = 60 + (double) n * 0.5;

        while (l.replied < n) {
                while (next < n && l.inflight < par) {
                        reqs[next] = (LaunchReq) { &l, next };
                        int r = sd_bus_call_method_async(bus, NULL, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Launch",
                                                         on_launch_reply, &reqs[next], "sssa{sv}", command,
                                                         session, "/", 0);
                        if (r < 0)
                                die("Launch: %s", strerror(-r));
                        next++;
                        l.inflight++;
                }
                bus_step(USEC_PER_SEC);
                if (n >= 500 && (now_ns() - last_note) > 10 * UINT64_C(1000000000)) {
                        last_note = now_ns();
                        progress("  ... %zu of %zu launched", l.replied, n);
                }
                if (s_since(t0) > deadline_s)
                        die("launching %zu jobs took longer than %.0f s", n, deadline_s);
        }
        double secs = s_since(t0);
        size_t failed = l.failed;
        if (wait_end) {
                /* The ids before done_from have all ended. */
                while (true) {
                        while (done_from < n && (!ids[done_from].s[0] || set_get(&bgrun_ended, ids[done_from].s)))
                                done_from++;
                        if (done_from == n)
                                break;
                        if (s_since(t0) > deadline_s) {
                                progress("jobs still running after %.0f s", deadline_s);
                                free(reqs);
                                return -1;
                        }
                        bus_step(USEC_PER_SEC);
                }
                secs = s_since(t0);
                size_t bad = 0;
                count_ended(ids, n, &bad);
                failed += bad;
        }
        free(reqs);
        if (ret_failed)
                *ret_failed = failed;
        return secs;
}

static pid_t bgrund_pid(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint32_t pid = 0;
        int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "GetConnectionUnixProcessID", &e, &reply, "s", BGRUN_NAME);
        if (r < 0)
                die("cannot find bgrund's pid: %s", errmsg(&e));
        if (sd_bus_message_read(reply, "u", &pid) < 0)
                die("GetConnectionUnixProcessID: bad reply");
        sd_bus_message_unref(reply);
        return (pid_t) pid;
}

static uint32_t running_jobs(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        uint32_t n = 0;
        int r = sd_bus_get_property_trivial(bus, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "RunningJobs", &e, 'u', &n);
        if (r < 0)
                die("RunningJobs: %s", errmsg(&e));
        return n;
}

static void wait_no_running(void) {
        uint64_t t0 = now_ns();
        while (running_jobs() > 0) {
                if (s_since(t0) > 60)
                        die("bgrund still has running jobs after 60 s");
                usleep(20 * 1000);
        }
}

/* --- processes and memory ---------------------------------------------- */

static pid_t spawn(char *const argv[], int *ret_pidfd) {
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

static int reap(pid_t pid) {
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        die("waitpid: %m");
        return st;
}

/* Run argv and wait for it; its wall time in ms, or -1 if it failed. */
static double run_timed(char *const argv[]) {
        uint64_t t0 = now_ns();
        int st = reap(spawn(argv, NULL));
        double ms = ms_since(t0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                progress("%s failed (status 0x%x)", argv[0], st);
                return -1;
        }
        return ms;
}

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

static long rss_kb(pid_t pid) {
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

/* Lines in /sys/fs/cgroup/CG/cgroup.procs; -1 if it cannot be read. */
static int count_procs(const char *cgroup_dir) {
        char path[1200], buf[8192];
        snprintf(path, sizeof path, "%s/cgroup.procs", cgroup_dir);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        int lines = 0;
        ssize_t k;
        while ((k = read(fd, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < k; i++)
                        lines += buf[i] == '\n';
        close(fd);
        return lines;
}

static bool wait_procs(const char *cgroup_dir, int want, double timeout_s) {
        uint64_t t0 = now_ns();
        int n;
        while ((n = count_procs(cgroup_dir)) != want) {
                if (s_since(t0) > timeout_s) {
                        progress("%s has %d processes, not %d, after %.0f s", cgroup_dir, n, want, timeout_s);
                        return false;
                }
                usleep(2000);
        }
        return true;
}

static int write_str(const char *path, const char *s) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t k = write(fd, s, strlen(s));
        int r = k < 0 ? -errno : 0;
        close(fd);
        return r;
}

/* --- the results table ------------------------------------------------- */

typedef struct Row {
        char *what, *bgrun, *ref, *ratio, *goal;
} Row;

static Row rows[64];
static size_t n_rows;

static void row(char *what, char *bgrun_cell, char *ref, char *ratio, char *goal) {
        if (n_rows < ELEMENTSOF(rows))
                rows[n_rows++] = (Row) { what, bgrun_cell, ref, ratio, goal };
}

static char *ratio_str(double a, double b) {
        if (a < 0 || b <= 0)
                return fmt("n/a");
        return fmt("%.2fx", a / b);
}

static char *notes[32];
static size_t n_notes;

static void note(char *s) {
        if (n_notes < ELEMENTSOF(notes))
                notes[n_notes++] = s;
        progress("note: %s", s);
}

/* --- 1. launch latency -------------------------------------------------- */

static char *next_unit_name(const char *suffix) {
        return fmt("%s%u%s", unit_prefix, unit_counter++, suffix);
}

/* StartTransientUnit of a Type=exec service running /bin/true, collected
 * when inactive. The reply's job path goes into ret_job. */
typedef struct Unit {
        char *name;
        char job[256];
        int state; /* 0 not sent, 1 sent, 2 job queued, 3 started, 4 failed */
        pid_t pid; /* systemd-run runs */
        int pidfd;
} Unit;

static int on_stu_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Unit *u = userdata;
        const char *job;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e || sd_bus_message_read(m, "o", &job) < 0) {
                progress("StartTransientUnit %s failed: %s", u->name, e ? errmsg(e) : "bad reply");
                u->state = 4;
                return 0;
        }
        snprintf(u->job, sizeof u->job, "%s", job);
        u->state = 2;
        return 0;
}

/* Without scope_pid, a Type=exec service running /bin/true; with it, a scope
 * holding that process (the way bgrund starts a job). */
static void stu_send(Unit *u, pid_t scope_pid) {
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, SD_NAME, SD_PATH, SD_IFACE, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", u->name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)", "Description", "s", "bgrun-bench reference",
                                          "CollectMode", "s", "inactive-or-failed");
        if (r >= 0 && scope_pid > 0)
                r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t) scope_pid);
        else if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)", "Type", "s", "exec", "ExecStart", "a(sasb)", 1, "/bin/true",
                                          1, "/bin/true", 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, m, on_stu_reply, u, CALL_TIMEOUT);
        sd_bus_message_unref(m);
        if (r < 0)
                die("StartTransientUnit: %s", strerror(-r));
        u->state = 1;
}

/* Has the unit's start job finished? */
static bool unit_started(Unit *u) {
        if (u->state == 2) {
                const char *res = set_get(&sd_jobs_removed, u->job);
                if (res) {
                        u->state = streq(res, "done") ? 3 : 4;
                        if (u->state == 4)
                                progress("start job of %s: %s", u->name, res);
                }
        }
        return u->state >= 3;
}

static bool unit_removed(const Unit *u) {
        return set_get(&sd_units_removed, u->name) != NULL;
}

static bool wait_unit_removed(const Unit *u, double timeout_s) {
        uint64_t t0 = now_ns();
        while (!unit_removed(u)) {
                if (s_since(t0) > timeout_s) {
                        progress("unit %s not collected after %.0f s", u->name, timeout_s);
                        return false;
                }
                bus_step(100 * USEC_PER_MSEC);
        }
        return true;
}

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

static void bench_launch(void) {
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

/* --- 2. throughput ----------------------------------------------------- */

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

static void bench_throughput(void) {
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

/* --- 3. kill latency ---------------------------------------------------- */

/* The kernel sends at most one notification of a cgroup.events change per
 * DIV_ROUND_UP(HZ, 100) jiffies and defers the rest by a timer: a cgroup
 * emptied within ~10-20 ms of its previous change (here: the job's processes
 * arriving) is reported late. Jobs are not killed that young in practice, so
 * both sides wait this long after the processes are there. */
#define KILL_SETTLE_USEC (50 * 1000)

static const char *kill_command(unsigned nproc) {
        return nproc == 1 ? "exec sleep 1000" : "for i in $(seq 100); do sleep 1000 & done; wait";
}

/* Kill one job of nproc processes (after all are there); ms or -1. */
static double kill_once(unsigned nproc, Samples *s_confirm, Samples *s_reply) {
        JobId id;
        Rec rec;
        double ms = -1;
        if (!launch(kill_command(nproc), &id, NULL))
                return -1;
        if (!record("Get", id.s, 0, &rec) || !rec.cgroup[0]) {
                progress("job %s has no cgroup in its record", id.s);
                goto end;
        }
        char *dir = fmt("/sys/fs/cgroup%s", rec.cgroup);
        bool ok = wait_procs(dir, nproc == 1 ? 1 : 101, 30);
        free(dir);
        if (!ok)
                goto end;
        usleep(KILL_SETTLE_USEC);

        sd_bus_error e = SD_BUS_ERROR_NULL;
        uint64_t rt0 = now_rt_usec(), t0 = now_ns();
        sd_bus_message *reply = bgrun_call("Kill", CALL_TIMEOUT, &e, "s", id.s);
        ms = ms_since(t0);
        uint64_t rt1 = now_rt_usec();
        if (!reply) {
                progress("Kill %s failed: %s", id.s, errmsg(&e));
                sd_bus_error_free(&e);
                ms = -1;
                goto end;
        }
        rec = (Rec) {};
        if (read_rec(reply, &rec) < 0 || !rec.killed || !rec.dead) {
                progress("Kill %s: killed=%d dead=%d", id.s, rec.killed, rec.dead);
                ms = -1;
        } else if (rec.confirmed_at >= rt0 && rec.confirmed_at <= rt1) {
                sample_add(s_confirm, (double) (rec.confirmed_at - rt0) / 1000);
                sample_add(s_reply, (double) (rt1 - rec.confirmed_at) / 1000);
        }
        sd_bus_message_unref(reply);
end:
        if (ms < 0) {
                sd_bus_message_unref(bgrun_call("Kill", CALL_TIMEOUT, NULL, "s", id.s));
        }
        forget(id.s);
        return ms;
}

/* The floor: the same processes in a cgroup of our own; cgroup.kill, then
 * wait (inotify) for "populated 0". ms or -1. */
static double kill_ref_once(unsigned nproc) {
        char *dir = fmt("/sys/fs/cgroup%s/bgrun-bench-kill", streq(my_cgroup, "/") ? "" : my_cgroup);
        char *procs = fmt("%s/cgroup.procs", dir), *kill_file = fmt("%s/cgroup.kill", dir),
             *events = fmt("%s/cgroup.events", dir);
        double ms = -1;
        int efd = -1, ifd = -1;
        pid_t pid = -1;

        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                progress("mkdir %s: %m", dir);
                goto out;
        }
        pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                if (write_str(procs, "0") < 0)
                        _exit(126);
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fd >= 0) {
                        dup2(fd, STDIN_FILENO);
                        dup2(fd, STDOUT_FILENO);
                }
                execl("/bin/sh", "sh", "-c", kill_command(nproc), (char *) NULL);
                _exit(127);
        }
        if (!wait_procs(dir, nproc == 1 ? 1 : 101, 30))
                goto kill;
        usleep(KILL_SETTLE_USEC);
        efd = open(events, O_RDONLY | O_CLOEXEC);
        ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (efd < 0 || ifd < 0 || inotify_add_watch(ifd, events, IN_MODIFY) < 0) {
                progress("watching %s: %m", events);
                goto kill;
        }
        uint64_t t0 = now_ns();
        if (write_str(kill_file, "1") < 0) {
                progress("cgroup.kill: %m");
                goto kill;
        }
        while (true) {
                char buf[512];
                ssize_t k = pread(efd, buf, sizeof buf - 1, 0);
                if (k > 0) {
                        buf[k] = '\0';
                        if (strstr(buf, "populated 0"))
                                break;
                }
                struct pollfd p = { .fd = ifd, .events = POLLIN };
                if (poll(&p, 1, 10000) == 0) {
                        progress("%s not empty 10 s after cgroup.kill", dir);
                        goto kill;
                }
                while (read(ifd, buf, sizeof buf) > 0)
                        ;
        }
        ms = ms_since(t0);
kill:
        (void) write_str(kill_file, "1");
        reap(pid);
        wait_procs(dir, 0, 10);
out:
        if (efd >= 0)
                close(efd);
        if (ifd >= 0)
                close(ifd);
        for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(10000);
        free(dir), free(procs), free(kill_file), free(events);
        return ms;
}

static void bench_kill(void) {
        const unsigned sizes[] = { 1, 100 };
        for (size_t k = 0; k < ELEMENTSOF(sizes); k++) {
                unsigned nproc = sizes[k];
                Samples sb = {}, sr = {}, sc = {}, sy = {};
                progress("3. kill latency: %u × a job of %u process%s, and the cgroup.kill floor", S.kills, nproc,
                         nproc == 1 ? "" : "es");
                for (unsigned i = 0; i < S.kills; i++) {
                        double ms = kill_once(nproc, &sc, &sy);
                        if (ms >= 0)
                                sample_add(&sb, ms);
                        ms = kill_ref_once(nproc);
                        if (ms >= 0)
                                sample_add(&sr, ms);
                }
                if (sb.n < S.kills)
                        note(fmt("kill of %u processes: %zu of %u kills failed", nproc, S.kills - sb.n, S.kills));
                double m = med(&sb);
                row(fmt("Kill → teardown confirmed (Kill's reply), job of %u process%s; median / p99 (n=%zu)", nproc,
                        nproc == 1 ? "" : "es", sb.n),
                    lat_str(&sb),
                    sr.n ? fmt("`cgroup.kill` + wait for `populated 0` on a plain cgroup (floor): %s", lat_str(&sr))
                         : fmt("cgroup.kill floor: n/a (cannot make a cgroup here)"),
                    ratio_str(m, med(&sr)),
                    nproc == 100 ? fmt("< 10 ms median: %s", m < 0 ? "n/a" : m < 10 ? "met" : "not met")
                                 : fmt("–"));
                row(fmt("″ split at the record's `teardown.confirmed_at`; medians (n=%zu)", sc.n),
                    fmt("Kill → confirmed_at %s; confirmed_at → reply %s", ms_str(med(&sc)), ms_str(med(&sy))),
                    fmt("–"), fmt("–"), fmt("–"));
                free(sb.v), free(sr.v), free(sc.v), free(sy.v);
        }
}

/* --- 4. output throughput ----------------------------------------------- */

static double best(const Samples *s) {
        double b = -1;
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i] > b)
                        b = s->v[i];
        return b;
}

static void bench_output(void) {
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
                         * ours, writing the file itself (tmpfs, as the state
                         * directory is in the sandbox). */
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
                        if (streq(rec.status, "exited") && rec.output_bytes == S.output_bytes)
                                sample_add(&sb, last_b = mb / (ms / 1000));
                        else
                                progress("output job %s: status %s, %" PRIu64 " bytes", id.s, rec.status,
                                         rec.output_bytes);
                }
                forget(id.s);
                if (i % 2 == 1 && last_b > 0 && last_d > 0)
                        sample_add(&pairs, last_b / last_d);
        }
        double b = med(&sb), d = med(&sd), pr = med(&pairs);
        row(fmt("Output: a job writing %.0f MiB to stdout, Launch → Wait returns; median (best) of %zu", mb, sb.n),
            b > 0 ? fmt("%.0f MiB/s (%.0f)", b, best(&sb)) : fmt("n/a"),
            d > 0 ? fmt("`%s > FILE` as a plain child, both on tmpfs: %.0f MiB/s (%.0f)", cmd, d, best(&sd))
                  : fmt("n/a"),
            pr > 0 ? fmt("%.2fx (median of %zu back-to-back pairs; of medians %s, of bests %s)", pr, pairs.n,
                         ratio_str(b, d), ratio_str(best(&sb), best(&sd)))
                   : fmt("n/a"),
            fmt("≥ 0.9x: %s", pr > 0 ? (pr >= 0.9 ? "met" : "not met") : "n/a"));
        free(sb.v), free(sd.v), free(pairs.v), free(cmd), free(direct);
}

/* --- 5. memory with jobs running --------------------------------------- */

static void bench_running_memory(void) {
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

/* --- 5b/6. memory over finished jobs, cost against the record count ----- */

/* Get, each call followed by a Peer.Ping to bgrund: the bus round trip with
 * no work behind it, the reference that tells the record count's effect from
 * the machine's mood in the minutes between the two measurements. */
static void measure_get(const JobId *ids, size_t n, unsigned calls, Samples *s, Samples *ping) {
        for (unsigned i = 0; i < calls; i++) {
                const char *id = ids[((size_t) i * 7919) % n].s;
                sd_bus_error e = SD_BUS_ERROR_NULL;
                uint64_t t0 = now_ns();
                if (sd_bus_call_method(bus, BGRUN_NAME, BGRUN_PATH, "org.freedesktop.DBus.Peer", "Ping", &e, NULL,
                                       "") >= 0)
                        sample_add(ping, ms_since(t0));
                sd_bus_error_free(&e);
                t0 = now_ns();
                sd_bus_message *reply = bgrun_call("Get", CALL_TIMEOUT, &e, "s", id);
                double ms = ms_since(t0);
                if (!reply) {
                        progress("Get %s: %s", id, errmsg(&e));
                        sd_bus_error_free(&e);
                        continue;
                }
                sd_bus_message_unref(reply);
                sample_add(s, ms);
        }
}

/* ListJobs(""): up to `calls` calls within budget_s (at least 5). */
static void measure_list(unsigned calls, double budget_s, Samples *s, unsigned *ret_entries) {
        uint64_t start = now_ns();
        for (unsigned i = 0; i < calls; i++) {
                if (i >= 5 && s_since(start) > budget_s)
                        break;
                sd_bus_error e = SD_BUS_ERROR_NULL;
                uint64_t t0 = now_ns();
                sd_bus_message *reply = bgrun_call("ListJobs", CALL_TIMEOUT, &e, "s", "");
                double ms = ms_since(t0);
                if (!reply) {
                        progress("ListJobs: %s", errmsg(&e));
                        sd_bus_error_free(&e);
                        continue;
                }
                if (i == 0) {
                        unsigned n = 0;
                        int r = sd_bus_message_enter_container(reply, 'a', "(sssso)");
                        while (r >= 0 && (r = sd_bus_message_skip(reply, "(sssso)")) > 0)
                                n++;
                        *ret_entries = n;
                }
                sd_bus_message_unref(reply);
                sample_add(s, ms);
        }
}

static int on_list_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(bool *) userdata = true;
        return 0;
}

/* Peer.Ping round trips to bgrund while a ListJobs("") at many records is
 * being answered: whether one big answer holds up everyone else. */
static void measure_ping_during_list(unsigned rounds, Samples *s) {
        for (unsigned i = 0; i < rounds; i++) {
                bool done = false;
                sd_bus_slot *slot = NULL;
                int r = sd_bus_call_method_async(bus, &slot, BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "ListJobs",
                                                 on_list_reply, &done, "s", "");
                if (r < 0)
                        die("ListJobs: %s", strerror(-r));
                while (!done) {
                        sd_bus_error e = SD_BUS_ERROR_NULL;
                        uint64_t t0 = now_ns();
                        if (sd_bus_call_method(bus, BGRUN_NAME, BGRUN_PATH, "org.freedesktop.DBus.Peer", "Ping", &e,
                                               NULL, "") >= 0)
                                sample_add(s, ms_since(t0));
                        sd_bus_error_free(&e);
                        bus_drain();
                }
                sd_bus_slot_unref(slot);
        }
}

static void bench_records(void) {
        size_t total = S.finished_b;
        JobId *ids = xcalloc(total, sizeof(JobId));
        Samples g10 = {}, l10 = {}, gN = {}, lN = {}, p10 = {}, pN = {}, pL = {};
        unsigned e10 = 0, eN = 0;
        size_t failed = 0, f;
        pid_t dpid = bgrund_pid();

        wait_no_running();
        long r0 = rss_kb(dpid);
        progress("5b. bgrund RSS with 0 records: %.1f MiB; now %zu finished jobs of `true`", r0 / KIB,
                 (size_t) S.small_records);

        if (launch_many("true", S.small_records, S.small_records, ids, true, &f) < 0)
                die("the first %u jobs did not end", S.small_records);
        failed += f;
        progress("6. Get and ListJobs at %u records (%u calls each)", S.small_records, S.get_calls);
        measure_get(ids, S.small_records, S.get_calls, &g10, &p10);
        measure_list(S.get_calls, S.list_budget_s, &l10, &e10);

        progress("5b. ... up to %u finished jobs (%u in flight)", S.finished_a, S.memory_parallel);
        if (launch_many("true", S.finished_a - S.small_records, S.memory_parallel, ids + S.small_records, true, &f) < 0)
                die("jobs did not end");
        failed += f;
        wait_no_running();
        long ra = rss_kb(dpid);
        progress("   ... RSS %.1f MiB; up to %u finished jobs", ra / KIB, S.finished_b);
        if (launch_many("true", S.finished_b - S.finished_a, S.memory_parallel, ids + S.finished_a, true, &f) < 0)
                die("jobs did not end");
        failed += f;
        wait_no_running();
        long rb = rss_kb(dpid);
        progress("   ... RSS %.1f MiB", rb / KIB);
        if (bgrund_pid() != dpid)
                note(fmt("bgrund's pid changed while finished jobs piled up (restarted?)"));
        if (failed)
                note(fmt("finished jobs: %zu of %u did not exit cleanly", failed, S.finished_b));

        progress("6. Get and ListJobs at %u records", S.finished_b);
        measure_get(ids, total, S.get_calls, &gN, &pN);
        measure_list(S.get_calls, S.list_budget_s, &lN, &eN);
        measure_ping_during_list(5, &pL);

        double growth_mb = (double) (rb - r0) / KIB;
        row(fmt("bgrund VmRSS after 0 / %u / %u finished jobs (records kept)", S.finished_a, S.finished_b),
            fmt("%.1f / %.1f / %.1f MiB", r0 / KIB, ra / KIB, rb / KIB),
            fmt("growth over %u finished: %+.2f MiB (%+.0f bytes per job)", S.finished_b, growth_mb,
                (double) (rb - r0) * 1024.0 / S.finished_b),
            fmt("–"), fmt("< 5 MB growth over 5,000: %s", quick ? "n/a (--quick)" : growth_mb * MIB < 5e6 ? "met" : "not met"));

        row(fmt("Get latency at %u vs %u records; median / p99 (n=%zu / %zu)", e10, eN, g10.n, gN.n), lat_str(&gN),
            fmt("at %u records: %s", e10, lat_str(&g10)), ratio_str(med(&gN), med(&g10)),
            fmt("–"));
        double get_norm = g10.n && gN.n && p10.n && pN.n ? (med(&gN) / med(&pN)) / (med(&g10) / med(&p10)) : -1;
        row(fmt("″ in bus round trips: Get ÷ a Peer.Ping to bgrund interleaved with it, at %u vs %u records", eN, e10),
            fmt("%.2f (Ping %s)", pN.n ? med(&gN) / med(&pN) : -1.0, ms_str(med(&pN))),
            fmt("at %u records: %.2f (Ping %s)", e10, p10.n ? med(&g10) / med(&p10) : -1.0, ms_str(med(&p10))),
            get_norm > 0 ? fmt("%.2fx", get_norm) : fmt("n/a"),
            fmt("independent of the record count (≤ 1.2x): %s",
                get_norm < 0 ? "n/a" : get_norm <= 1.2 ? "met" : "not met"));
        row(fmt("ListJobs(\"\") latency at %u vs %u records; median / p99 (n=%zu / %zu)", e10, eN, l10.n, lN.n),
            lat_str(&lN), fmt("at %u records: %s", e10, lat_str(&l10)), ratio_str(med(&lN), med(&l10)),
            fmt("– (grows with what it returns; %.1f µs per record)",
                lN.n && l10.n && eN > e10 ? 1000 * (med(&lN) - med(&l10)) / (double) (eN - e10) : -1.0));
        row(fmt("Peer.Ping to bgrund while a ListJobs(\"\") of %u records is answered; median / max (n=%zu)", eN, pL.n),
            fmt("%s / %s", ms_str(med(&pL)), ms_str(pct(&pL, 100))),
            fmt("the same Ping, interleaved with Get: %s", ms_str(med(&pN))), ratio_str(med(&pL), med(&pN)),
            fmt("– (one big answer does not hold up other callers)"));

        progress("   forgetting %zu records", total);
        uint64_t t0 = now_ns();
        batch("Forget", ids, total, 64);
        progress("   ... in %.1f s", s_since(t0));
        free(ids);
        free(g10.v), free(l10.v), free(gN.v), free(lN.v), free(p10.v), free(pN.v), free(pL.v);
}

/* --- setup and cleanup -------------------------------------------------- */

/* Kill and forget every job of this run's session; remove our files. */
static void cleanup(void) {
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
        int r = sd_bus_open_system(&bus);
        if (r < 0)
                die("cannot connect to the system bus: %s", strerror(-r));

        snprintf(session, sizeof session, "bgrun-bench-%d", (int) getpid());
        snprintf(unit_prefix, sizeof unit_prefix, "bgrun-bench-%d-", (int) getpid());
        snprintf(out_file, sizeof out_file, "/var/tmp/bgrun-bench-%d.out", (int) getpid());

        r = sd_bus_match_signal(bus, NULL, NULL, BGRUN_PATH, BGRUN_IFACE, "JobRemoved", on_bgrun_job_removed, NULL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, SD_NAME, SD_PATH, SD_IFACE, "JobRemoved", on_sd_job_removed, NULL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, SD_NAME, SD_PATH, SD_IFACE, "UnitRemoved", on_sd_unit_removed, NULL);
        if (r < 0)
                die("cannot subscribe to signals: %s", strerror(-r));
        sd_bus_error e = SD_BUS_ERROR_NULL;
        r = sd_bus_call_method(bus, SD_NAME, SD_PATH, SD_IFACE, "Subscribe", &e, NULL, "");
        if (r < 0)
                die("systemd Subscribe: %s", errmsg(&e));

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

int main(int argc, char *argv[]) {
        static const struct option opts[] = {
                { "quick", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;
        while ((c = getopt_long(argc, argv, "qh", opts, NULL)) >= 0)
                switch (c) {
                case 'q':
                        quick = true;
                        break;
                case 'h':
                        printf("usage: %s [--quick]\n"
                               "Runs bgrun's benchmarks against references measured in the same run and prints\n"
                               "a Markdown table. Needs root and a bgrund on the system bus: use tools/benchmark.\n",
                               argv[0]);
                        return 0;
                default:
                        fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
                        return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
                return 2;
        }
        S = quick ? quick_sizes : full_sizes;
        setvbuf(stderr, NULL, _IOLBF, 0);

        setup();
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);

        uint64_t t_start = now_ns();
        pid_t dpid = bgrund_pid();
        long rss_fresh = rss_kb(dpid);
        char *version = property_s(BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "Version");
        char *mode = property_s(BGRUN_NAME, BGRUN_PATH, BGRUN_IFACE, "ContainmentMode");
        char *sd_version = property_s(SD_NAME, SD_PATH, SD_IFACE, "Version");
        progress("bgrun %s (%s), systemd %s, bgrund pid %d, RSS %.1f MiB; %s run", version, mode, sd_version,
                 (int) dpid, rss_fresh / KIB, quick ? "quick" : "full-size");

        bench_launch();
        bench_throughput();
        bench_kill();
        bench_output();
        bench_running_memory();
        bench_records();
        cleanup();

        struct utsname u;
        uname(&u);
        time_t now = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        printf("### bgrun benchmark%s\n\n", quick ? " (--quick: small counts, not for comparison)" : "");
        printf("bgrun %s (containment %s) in a private systemd %s with dbus-daemon (tools/sandbox), "
               "kernel %s, %ld CPUs, %s; %.0f s. bgrund RSS at start (no job yet): %.1f MiB.\n\n",
               version, mode, sd_version, u.release, ncpu, date, s_since(t_start), rss_fresh / KIB);
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
