/* SPDX-License-Identifier: MIT */
/* bgrun-bench, 3: kill latency, bgrun's Kill of a job of 1 and of 100
 * processes against cgroup.kill on a plain cgroup of our own, one bus
 * round trip and one durable 4 KiB write on bgrund's state file system. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-common.h"

/* The kernel sends at most one notification of a cgroup.events change per
 * DIV_ROUND_UP(HZ, 100) jiffies and defers the rest by a timer: a cgroup
 * emptied within ~10-20 ms of its previous change (here: the job's processes
 * arriving) is reported late. Jobs are not killed that young in practice, so
 * both sides wait this long after the processes are there. */
#define KILL_SETTLE_USEC (50 * 1000)

static const char *kill_command(unsigned nproc) {
        return nproc == 1 ? "exec sleep 1000" : "for i in $(seq 100); do sleep 1000 & done; wait";
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
        /* Kill answers at the confirmation; the record is final (and the
         * job forgettable) once Wait answers, milliseconds later. */
        (void) record("Wait", id.s, 30 * USEC_PER_SEC, &rec);
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

/* One bus round trip to bgrund: org.freedesktop.DBus.Peer.Ping, which
 * sd-bus answers by itself. ms or -1. */
static double ping_once(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint64_t t0 = now_ns();
        int r = sd_bus_call_method(bus, BGRUN_NAME, BGRUN_PATH, "org.freedesktop.DBus.Peer", "Ping", &e, &reply, "");
        double ms = ms_since(t0);
        if (r < 0) {
                progress("Peer.Ping: %s", errmsg(&e));
                ms = -1;
        }
        sd_bus_error_free(&e);
        sd_bus_message_unref(reply);
        return ms;
}

/* The cost of durability: one 4 KiB pwrite + fdatasync into a file made
 * empty (and synced) beforehand, in bgrund's state directory: what a Kill's
 * teardown slot costs before the answer. ms or -1. */
static double durable_write_once(void) {
        const char *path = "/var/lib/bgrun/bench-durable-write";
        char buf[4096];
        memset(buf, 'x', sizeof buf);
        double ms = -1;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
                progress("%s: %m", path);
                return -1;
        }
        int dfd = open("/var/lib/bgrun", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0 && fsync(fd) == 0 && fsync(dfd) == 0) {
                uint64_t t0 = now_ns();
                if (pwrite(fd, buf, sizeof buf, 0) == (ssize_t) sizeof buf && fdatasync(fd) == 0)
                        ms = ms_since(t0);
        }
        if (dfd >= 0)
                close(dfd);
        close(fd);
        (void) unlink(path);
        return ms;
}

/* The references of one kill phase, interleaved with its kills. */
typedef struct KillRefs {
        Samples floor, ping, write;
} KillRefs;

static void kill_refs_round(KillRefs *k, unsigned nproc) {
        double ms = kill_ref_once(nproc);
        if (ms >= 0)
                sample_add(&k->floor, ms);
        /* a few, as they are short and the kills are few */
        for (int p = 0; p < 5; p++) {
                if ((ms = ping_once()) >= 0)
                        sample_add(&k->ping, ms);
                if ((ms = durable_write_once()) >= 0)
                        sample_add(&k->write, ms);
        }
}

/* floor + one bus round trip + one durable write, or -1. */
static double kill_ref_sum(KillRefs *k) {
        return k->floor.n && k->ping.n && k->write.n ? med(&k->floor) + med(&k->ping) + med(&k->write) : -1;
}

static void kill_refs_done(KillRefs *k) {
        free(k->floor.v), free(k->ping.v), free(k->write.v);
}

/* The rows of a 1-process kill: against floor + round trip + write (goal
 * ≤ 2x), the write itself, and the split at confirmed_at. */
static void kill_rows_1(const char *what, Samples *sb, Samples *sc, Samples *sy, KillRefs *k, const char *fs) {
        double m = med(sb), ref = kill_ref_sum(k);
        row(fmt("%s; median / p99 (n=%zu)", what, sb->n), lat_str(sb),
            fmt("`cgroup.kill` floor %s + Peer.Ping to bgrund %s + one 4 KiB `pwrite`+`fdatasync` on %s %s (medians) = %s",
                ms_str(med(&k->floor)), ms_str(med(&k->ping)), fs, ms_str(med(&k->write)), ms_str(ref)),
            ratio_str(m, ref), fmt("≤ 2x: %s", m < 0 || ref <= 0 ? "n/a" : m <= 2 * ref ? "met" : "not met"));
        row(fmt("″ reference: one 4 KiB `pwrite` + `fdatasync` into an empty file of bgrund's state directory (%s), "
                "what the teardown slot costs before the answer; median / p99 (n=%zu)", fs, k->write.n),
            lat_str(&k->write), fmt("–"), fmt("–"), fmt("–"));
        row(fmt("″ split at the record's `teardown.confirmed_at`; medians (n=%zu)", sc->n),
            fmt("Kill → confirmed_at %s; confirmed_at → reply %s", ms_str(med(sc)), ms_str(med(sy))), fmt("–"),
            fmt("–"), fmt("–"));
}

/* The 1-process kill once more with the state on tmpfs, where the write
 * before the answer costs next to nothing. */
static void kill_on_tmpfs(void) {
        Samples sb = {}, sc = {}, sy = {};
        KillRefs k = {};
        progress("3. kill latency: %u × a job of 1 process, with bgrund's state on tmpfs", S.kills);
        set_storage("tmpfs");
        for (unsigned i = 0; i < S.kills; i++) {
                double ms = kill_once(1, &sc, &sy);
                if (ms >= 0)
                        sample_add(&sb, ms);
                kill_refs_round(&k, 1);
        }
        set_storage("ext4");
        kill_rows_1("″ with bgrund's state on tmpfs", &sb, &sc, &sy, &k, "tmpfs");
        free(sb.v), free(sc.v), free(sy.v);
        kill_refs_done(&k);
}

void bench_kill(void) {
        const unsigned sizes[] = { 1, 100 };
        for (size_t n = 0; n < ELEMENTSOF(sizes); n++) {
                unsigned nproc = sizes[n];
                Samples sb = {}, sc = {}, sy = {};
                KillRefs k = {};
                progress("3. kill latency: %u × a job of %u process%s, and the cgroup.kill floor", S.kills, nproc,
                         nproc == 1 ? "" : "es");
                for (unsigned i = 0; i < S.kills; i++) {
                        double ms = kill_once(nproc, &sc, &sy);
                        if (ms >= 0)
                                sample_add(&sb, ms);
                        kill_refs_round(&k, nproc);
                }
                if (sb.n < S.kills)
                        note(fmt("kill of %u processes: %zu of %u kills failed", nproc, S.kills - sb.n, S.kills));
                double m = med(&sb);
                row(fmt("Kill → teardown confirmed (Kill's reply), job of %u process%s; median / p99 (n=%zu)", nproc,
                        nproc == 1 ? "" : "es", sb.n),
                    lat_str(&sb),
                    k.floor.n ? fmt("`cgroup.kill` + wait for `populated 0` on a plain cgroup (floor): %s", lat_str(&k.floor))
                              : fmt("cgroup.kill floor: n/a (cannot make a cgroup here)"),
                    ratio_str(m, med(&k.floor)),
                    nproc == 100 ? fmt("≤ 1.1x: %s; < 10 ms median: %s",
                                       m < 0 || !k.floor.n ? "n/a" : m <= 1.1 * med(&k.floor) ? "met" : "not met",
                                       m < 0 ? "n/a" : m < 10 ? "met" : "not met")
                                 : fmt("–"));
                if (nproc == 1)
                        kill_rows_1("″", &sb, &sc, &sy, &k, state_fs());
                else
                        row(fmt("″ split at the record's `teardown.confirmed_at`; medians (n=%zu)", sc.n),
                            fmt("Kill → confirmed_at %s; confirmed_at → reply %s", ms_str(med(&sc)), ms_str(med(&sy))),
                            fmt("–"), fmt("–"), fmt("–"));
                if (nproc == 1 && storage_switchable())
                        kill_on_tmpfs();
                free(sb.v), free(sc.v), free(sy.v);
                kill_refs_done(&k);
        }
}

/* cgroupfs (a container's setting): the 1-process Kill over bgrund
 * --listen's socket, against the same references. */
void bench_kill_cgroupfs(void) {
        Samples sb = {}, sc = {}, sy = {};
        KillRefs k = {};
        progress("cgroupfs kill latency: %u × a job of 1 process, and the cgroup.kill floor", S.kills);
        for (unsigned i = 0; i < S.kills; i++) {
                double ms = kill_once(1, &sc, &sy);
                if (ms >= 0)
                        sample_add(&sb, ms);
                kill_refs_round(&k, 1);
        }
        if (sb.n < S.kills)
                note(fmt("cgroupfs kill: %zu of %u kills failed", S.kills - sb.n, S.kills));
        kill_rows_1("cgroupfs: Kill → teardown confirmed (Kill's reply), job of 1 process, one peer-to-peer connection",
                    &sb, &sc, &sy, &k, state_fs());
        free(sb.v), free(sc.v), free(sy.v);
        kill_refs_done(&k);
}
