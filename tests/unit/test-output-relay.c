/* SPDX-License-Identifier: MIT */
/* The supervisor's relay: bytes into the pipe, the job's output files out,
 * read back as bgrund reads them. No root, no job: this process writes. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "job-store.h"
#include "macro.h"
#include "output-relay.h"
#include "output-store.h"

static char dir[] = "/tmp/bgrun-test-output-relay.XXXXXX";
static int dir_fd = -EBADF;

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static bool mounted;

static void teardown(void) {
        safe_close(dir_fd);
        if (mounted)
                (void) umount2(dir, MNT_DETACH);
        rm_rf_at(AT_FDCWD, dir);
}

static bool write_string(const char *path, const char *s) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        return fd >= 0 && write(fd, s, strlen(s)) == (ssize_t) strlen(s);
}

/* The test's directory becomes a tmpfs of size bytes, in a mount namespace
 * of this test's process alone: a filesystem that fills up for real. As
 * root, or else in a user namespace (which a process with threads, as
 * Criterion may make it, cannot enter). */
static void use_small_filesystem(uint64_t size) {
        char map[64], opts[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();
        if (unshare(CLONE_NEWNS) < 0) {
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
                        rm_rf_at(AT_FDCWD, dir); /* the suite's fini does not run after a skip */
                        cr_skip_test("needs CAP_SYS_ADMIN or a user namespace of its own to mount a tmpfs "
                                     "(unshare: %s)", strerror(errno));
                }
                snprintf(map, sizeof map, "0 %u 1", (unsigned) uid);
                cr_assert(write_string("/proc/self/uid_map", map));
                cr_assert(write_string("/proc/self/setgroups", "deny"));
                snprintf(map, sizeof map, "0 %u 1", (unsigned) gid);
                cr_assert(write_string("/proc/self/gid_map", map));
        }
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
        snprintf(opts, sizeof opts, "size=%llu,mode=0700", (unsigned long long) size);
        if (mount("bgrun-test", dir, "tmpfs", 0, opts) < 0) {
                rm_rf_at(AT_FDCWD, dir);
                cr_skip_test("needs to mount a tmpfs in a user namespace (%s)", strerror(errno));
        }
        mounted = true;
        safe_close(dir_fd);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static uint64_t free_bytes(void) {
        struct statvfs sv;
        cr_assert_eq(fstatvfs(dir_fd, &sv), 0);
        return (uint64_t) sv.f_bavail * sv.f_frsize;
}

/* fsync() of fd fails with EIO from now on in this process (a disk that
 * fails to write back). */
static void fail_fsync_of(int fd) {
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fsync, 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) fd, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(f), .filter = f };
        cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0, "seccomp: %s", strerror(errno));
}

TestSuite(output_relay, .init = setup, .fini = teardown);

static uint8_t job_byte(uint64_t l) {
        return (uint8_t) ('a' + (l * 7 + l / 26) % 26);
}

static bool exists(const char *name) {
        return faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A relay as a job's supervisor starts it: the owner's budget as yet
 * unknown (SUPERVISOR_DISK_WINDOW). */
static void open_relay_budgeted(OutputRelay *r, uint64_t cap, uint64_t keep_free, int *ret_w) {
        JobSpec spec = { .id = "abc0123456", .output_max_bytes = cap, .keep_free = keep_free };
        const char *step = NULL;
        *r = OUTPUT_RELAY_NULL;
        cr_assert_eq(output_relay_open(r, dir_fd, &spec, ret_w, &step), 0, "%s", step);
}

/* The same with all the budget it may want, as bgrund would give it: the
 * tests of the layout alone. */
static void open_relay(OutputRelay *r, uint64_t cap, uint64_t keep_free, int *ret_w) {
        open_relay_budgeted(r, cap, keep_free, ret_w);
        output_relay_set_disk_limit(r, UINT64_MAX);
}

/* The job writes bytes [from, to) of its output in writes of chunk,
 * relayed as the supervisor does between its other work. */
static void job_writes(OutputRelay *r, int w, uint64_t from, uint64_t to, size_t chunk) {
        uint8_t *buf = malloc(chunk);
        for (uint64_t at = from; at < to;) {
                size_t n = (size_t) MIN((uint64_t) chunk, to - at);
                for (size_t i = 0; i < n; i++)
                        buf[i] = job_byte(at + i);
                cr_assert_eq(loop_write(w, buf, n), 0);
                at += n;
                /* The pipe holds 64 KiB: read it as the poll loop would. */
                cr_assert_geq(output_relay_pump(r, UINT64_C(8) << 20), 0);
        }
        free(buf);
}

/* A job that writes total bytes in writes of chunk; then its end. */
static void run_job(OutputRelay *r, uint64_t cap, uint64_t keep_free, uint64_t total, size_t chunk) {
        int w = -EBADF;
        open_relay(r, cap, keep_free, &w);
        job_writes(r, w, 0, total, chunk);
        safe_close(w);
        output_relay_finish(r);
        cr_assert(r->eof);
}

static char *slurp(const char *name, size_t *ret_len) {
        char *s = NULL;
        cr_assert_eq(read_file_at(dir_fd, name, 64 << 20, &s, ret_len), 0);
        return s;
}

Test(output_relay, under_the_cap_it_is_the_output_and_nothing_else) {
        OutputRelay r;
        run_job(&r, 1000, 0, 1000, 100);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, 1000);
        cr_assert_eq(dropped, 0);
        cr_assert_not(exists(JOB_OUTPUT_STATE_FILE), "exactly at the cap: no state");
        cr_assert_not(exists(JOB_OUTPUT_TAIL_FILE));
        size_t len;
        _cleanup_free_ char *out = slurp("output", &len);
        cr_assert_eq(len, 1000);
        for (size_t i = 0; i < len; i++)
                cr_assert_eq((uint8_t) out[i], job_byte(i));
        output_relay_done(&r);
}

Test(output_relay, nothing_written_costs_nothing) {
        OutputRelay r;
        run_job(&r, 1000, 0, 0, 1);
        cr_assert_not(exists(JOB_OUTPUT_STATE_FILE));
        cr_assert_not(exists(JOB_OUTPUT_TAIL_FILE));
        uint64_t size;
        cr_assert_eq(job_store_output_size(dir_fd, &size), 0);
        cr_assert_eq(size, 0);
        output_relay_done(&r);
}

static void check_compacted(uint64_t cap, uint64_t total) {
        uint64_t head = cap - cap / 2, tail = cap / 2, dropped = total - cap;
        char marker[OUTPUT_MARKER_MAX];
        size_t m = output_marker(dropped, marker);
        size_t len;
        _cleanup_free_ char *out = slurp("output", &len);
        cr_assert_eq(len, cap + m);
        for (uint64_t i = 0; i < head; i++)
                cr_assert_eq((uint8_t) out[i], job_byte(i), "head byte %lu", (unsigned long) i);
        cr_assert_eq(memcmp(out + head, marker, m), 0, "the marker");
        for (uint64_t i = 0; i < tail; i++)
                cr_assert_eq((uint8_t) out[head + m + i], job_byte(total - tail + i), "tail byte %lu",
                             (unsigned long) i);
        cr_assert_not(exists(JOB_OUTPUT_TAIL_FILE), "the ring is gone");
        cr_assert_not(exists(JOB_OUTPUT_NEW_FILE));

        /* bgrund's view: output_bytes, a read in the gap, the descriptor. */
        uint64_t size, start, t;
        cr_assert_eq(job_store_output_size(dir_fd, &size), 0);
        cr_assert_eq(size, total);
        char buf[64];
        size_t n;
        cr_assert_eq(output_store_read(dir_fd, head + dropped / 2, buf, sizeof buf, &start, &n, &t), 0);
        cr_assert_eq(start, total - tail);
        cr_assert_eq(n, MIN(sizeof buf, tail));
        cr_assert_eq(t, total);
        for (size_t i = 0; i < n; i++)
                cr_assert_eq((uint8_t) buf[i], job_byte(start + i));
        _cleanup_close_ int fd = -EBADF;
        OutputLayout l;
        cr_assert_eq(output_store_open_kept(dir_fd, &fd, &l), 0);
        cr_assert_eq(l.phase, OUTPUT_COMPACTED);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        cr_assert_eq((uint64_t) st.st_size, cap + m);
}

Test(output_relay, past_the_cap_it_keeps_the_first_and_last_halves) {
        OutputRelay r;
        run_job(&r, 1 << 20, 0, 5000000, 65536);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, 5000000);
        cr_assert_eq(dropped, 5000000 - (1 << 20));
        check_compacted(1 << 20, 5000000);
        output_relay_done(&r);
}

Test(output_relay, one_byte_over_an_odd_cap) {
        OutputRelay r;
        run_job(&r, 1001, 0, 1002, 7);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(dropped, 1);
        check_compacted(1001, 1002);
        output_relay_done(&r);
}

Test(output_relay, below_keep_free_output_is_dropped_and_counted) {
        /* Never as much free space as this: dropped from the first look at
         * it on, which comes once the job wrote 64 KiB. */
        OutputRelay r;
        run_job(&r, 1 << 20, UINT64_MAX - 1, 300000, 4096);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, 300000, "output_bytes is what the job wrote");
        uint64_t kept = bytes - dropped;
        cr_assert_geq(kept, 64 << 10, "a job's first lines get through");
        cr_assert_leq(kept, 128 << 10, "then nothing (kept %lu)", (unsigned long) kept);
        cr_assert(r.warned_low, "and it was logged");
        uint64_t size, disk;
        cr_assert_eq(job_store_output_size(dir_fd, &size), 0);
        cr_assert_eq(size, 300000);
        cr_assert_eq(output_store_disk_size(dir_fd, &disk), 0);
        cr_assert_eq(disk, kept, "nothing else written");
        /* No room to compact either: readers go by the ring's layout. */
        char buf[16];
        size_t n;
        uint64_t start, t;
        cr_assert_eq(output_store_read(dir_fd, kept - 1, buf, sizeof buf, &start, &n, &t), 0);
        cr_assert_eq(n, 1, "the head's last byte, and not past the gap");
        cr_assert_eq((uint8_t) buf[0], job_byte(kept - 1));
        cr_assert_eq(output_store_read(dir_fd, kept, buf, sizeof buf, &start, &n, &t), 0);
        cr_assert_eq(n, 0);
        cr_assert_eq(start, 300000, "all the rest in the gap");
        output_relay_done(&r);
}

Test(output_relay, a_little_output_gets_through_below_keep_free) {
        OutputRelay r;
        run_job(&r, 1 << 20, UINT64_MAX - 1, 1000, 10);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, 1000);
        cr_assert_eq(dropped, 0);
        cr_assert_not(r.warned_low, "never looked at: too little to matter");
        output_relay_done(&r);
}

Test(output_relay, the_command_end_is_the_only_writer) {
        /* Every descriptor the relay holds is closed on exec, and the
         * write end is given away: the command gets nothing else. */
        JobSpec spec = { .id = "abc0123456", .output_max_bytes = 100, .keep_free = 0 };
        OutputRelay r = OUTPUT_RELAY_NULL;
        const char *step;
        int w;
        cr_assert_eq(output_relay_open(&r, dir_fd, &spec, &w, &step), 0);
        int fds[] = { r.pipe_fd, r.output_fd, r.null_fd, w };
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                cr_assert(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, "fd %zu", i);
        cr_assert(fcntl(r.pipe_fd, F_GETFL) & O_NONBLOCK, "our end does not block us");
        cr_assert_not(fcntl(w, F_GETFL) & O_NONBLOCK, "the command's end blocks as a pipe does");
        safe_close(w);
        cr_assert_eq(output_relay_pump(&r, 100), 1, "EOF");
        output_relay_done(&r);
}

/* --- readers while the ring turns -------------------------------------- */

typedef struct Pumping {
        OutputRelay *relay;
        volatile bool done;
        int error; /* what failed in the thread: Criterion asserts only in the main one */
} Pumping;

static void *pump_until_eof(void *userdata) {
        Pumping *p = userdata;
        while (!p->relay->eof) {
                struct pollfd q = { .fd = p->relay->pipe_fd, .events = POLLIN };
                (void) poll(&q, 1, -1);
                int k = output_relay_pump(p->relay, UINT64_C(1) << 20);
                if (k < 0) {
                        p->error = k;
                        break;
                }
        }
        if (p->error == 0)
                output_relay_finish(p->relay);
        p->done = true;
        return NULL;
}

Test(output_relay, a_reader_never_gets_a_replaced_byte) {
        /* A ring of 2 KiB, overwritten as fast as this machine writes,
         * read all along from everywhere: whatever ReadOutput returns is
         * what the job wrote at that offset, or nothing. */
        JobSpec spec = { .id = "abc0123456", .output_max_bytes = 4096, .keep_free = 0 };
        OutputRelay r = OUTPUT_RELAY_NULL;
        const char *step;
        int w;
        cr_assert_eq(output_relay_open(&r, dir_fd, &spec, &w, &step), 0);
        const uint64_t total = UINT64_C(64) << 20;

        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                safe_close(r.pipe_fd); /* EPIPE rather than blocked for good if the test fails */
                uint8_t buf[3000]; /* not a divisor of anything here */
                for (uint64_t at = 0; at < total;) {
                        size_t n = (size_t) MIN((uint64_t) sizeof buf, total - at);
                        for (size_t i = 0; i < n; i++)
                                buf[i] = job_byte(at + i);
                        if (loop_write(w, buf, n) < 0)
                                _exit(1);
                        at += n;
                }
                _exit(0);
        }
        safe_close(w);

        Pumping p = { .relay = &r };
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, pump_until_eof, &p), 0);
        unsigned reads = 0, in_tail = 0;
        uint8_t buf[1500];
        uint64_t offset = 0;
        while (!p.done) {
                uint64_t start, t_total;
                size_t n;
                cr_assert_eq(output_store_read(dir_fd, offset, buf, sizeof buf, &start, &n, &t_total), 0);
                cr_assert_geq(start, offset);
                for (size_t i = 0; i < n; i++)
                        cr_assert_eq(buf[i], job_byte(start + i), "byte %lu, read at %lu (read %u)",
                                     (unsigned long) (start + i), (unsigned long) offset, reads);
                reads++;
                in_tail += start >= 2048 && n > 0;
                /* Now behind, now at the end, now in the head. */
                offset = reads % 3 == 0 ? 0 : reads % 3 == 1 ? start + n : t_total > 1000 ? t_total - 1000 : 0;
        }
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_assert_eq(p.error, 0, "the relay failed: %s", strerror(-p.error));
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        cr_assert_gt(in_tail, 10, "the tail was read %u times of %u", in_tail, reads);

        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, total);
        check_compacted(4096, total);
        output_relay_done(&r);
}

/* --- the files fail ------------------------------------------------------ */

/* Relay until EOF, with the job writing in a process of its own (so it
 * may block on the pipe as a job does): total bytes, then its end. */
static void relay_a_writer(OutputRelay *r, int w, uint64_t total) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                /* Only the test holds the read end: if it fails, this
                 * writer gets EPIPE rather than block for good. */
                safe_close(r->pipe_fd);
                uint8_t buf[4096];
                for (uint64_t at = 0; at < total;) {
                        size_t n = (size_t) MIN((uint64_t) sizeof buf, total - at);
                        for (size_t i = 0; i < n; i++)
                                buf[i] = job_byte(at + i);
                        if (loop_write(w, buf, n) < 0)
                                _exit(1);
                        at += n;
                }
                _exit(0);
        }
        safe_close(w);
        while (!r->eof) {
                struct pollfd q = { .fd = r->pipe_fd, .events = POLLIN };
                cr_assert_eq(poll(&q, 1, 10000), 1, "the pipe went quiet: the job is stuck");
                cr_assert_geq(output_relay_pump(r, UINT64_C(8) << 20), 0, "the relay stopped reading the pipe");
        }
        output_relay_finish(r);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the job could not write all of it");
}

Test(output_relay, an_output_file_that_fails_drops_the_output_not_the_job) {
        /* splice() into a file in append mode fails with EINVAL, as it does
         * on a filesystem that cannot splice: not "no room", and not the
         * pipe's fault. */
        OutputRelay r;
        int w;
        open_relay(&r, 1 << 20, 0, &w);
        cr_assert_eq(fcntl(r.output_fd, F_SETFL, O_APPEND), 0);
        relay_a_writer(&r, w, 1 << 20);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, 1 << 20, "all of it was read");
        cr_assert_eq(dropped, 1 << 20, "and counted as dropped");
        uint64_t b, d;
        cr_assert_eq(job_store_output_counts(dir_fd, &b, &d), 0);
        cr_assert_eq(b, 1 << 20, "readers know what was written");
        cr_assert_eq(d, 1 << 20, "and what was dropped");
        output_relay_done(&r);
}

Test(output_relay, a_compaction_that_cannot_be_recorded_leaves_the_output_readable) {
        /* The new state is written, its fsync fails: the state must not
         * name a file that is then removed. */
        OutputRelay r;
        int w;
        const uint64_t total = 100000;
        open_relay(&r, 4096, 0, &w);
        job_writes(&r, w, 0, total, 1000);
        safe_close(w);
        cr_assert_geq(r.state_fd, 0);
        fail_fsync_of(r.state_fd);
        output_relay_finish(&r);
        cr_assert(r.eof);

        uint8_t buf[100];
        size_t n;
        uint64_t start, t;
        cr_assert_eq(output_store_read(dir_fd, total - 100, buf, sizeof buf, &start, &n, &t), 0);
        cr_assert_eq(n, 100, "the last bytes are still found");
        cr_assert_eq(start, total - 100);
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(buf[i], job_byte(start + i));
        cr_assert_eq(output_store_read(dir_fd, 0, buf, sizeof buf, &start, &n, &t), 0);
        cr_assert_eq(n, 100, "and the first ones");
        cr_assert_not(exists(JOB_OUTPUT_NEW_FILE));
        output_relay_done(&r);
}

Test(output_relay, keep_free_is_not_overrun_by_more_than_a_share_of_the_margin) {
        /* 1 MiB above KeepFree= when the job starts: looked at again
         * before it wrote much of that, not after 4 MiB. */
        use_small_filesystem(UINT64_C(32) << 20);
        OutputRelay r;
        int w;
        open_relay(&r, UINT64_C(1) << 30, 0, &w);
        uint64_t margin = UINT64_C(1) << 20;
        r.keep_free = free_bytes() - margin;
        job_writes(&r, w, 0, UINT64_C(8) << 20, 65536);
        safe_close(w);
        output_relay_finish(&r);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, UINT64_C(8) << 20);
        cr_assert_leq(bytes - dropped, margin + (UINT64_C(128) << 10), "kept %llu with a margin of %llu",
                      (unsigned long long) (bytes - dropped), (unsigned long long) margin);
        cr_assert_geq(bytes - dropped, margin - (UINT64_C(128) << 10));
        output_relay_done(&r);
}

Test(output_relay, output_is_kept_again_once_a_full_filesystem_has_room) {
        /* The filesystem fills up while the output is still LINEAR (no
         * state yet), then room comes back: the last output is kept. */
        use_small_filesystem(UINT64_C(1) << 20);
        {
                _cleanup_close_ int fd = openat(dir_fd, "ballast", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                cr_assert_geq(fd, 0);
                static uint8_t zero[512 << 10];
                cr_assert_eq(loop_write(fd, zero, sizeof zero), 0);
        }
        OutputRelay r;
        int w;
        open_relay(&r, UINT64_C(64) << 20, 0, &w);
        job_writes(&r, w, 0, UINT64_C(1) << 20, 4096);
        cr_assert(r.warned_low, "the filesystem filled up");
        cr_assert_eq(unlinkat(dir_fd, "ballast", 0), 0);
        const uint64_t total = (UINT64_C(1) << 20) + (UINT64_C(192) << 10);
        job_writes(&r, w, UINT64_C(1) << 20, total, 4096);
        safe_close(w);
        output_relay_finish(&r);

        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, total);
        uint8_t buf[100];
        size_t n;
        uint64_t start, t;
        cr_assert_eq(output_store_read(dir_fd, total - 100, buf, sizeof buf, &start, &n, &t), 0);
        cr_assert_eq(t, total, "readers know all that was written");
        cr_assert_eq(n, 100, "the last output is kept");
        cr_assert_eq(start, total - 100);
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(buf[i], job_byte(start + i));
        OutputLayout l;
        cr_assert_eq(output_store_layout(dir_fd, &l), 0);
        cr_assert_eq(output_layout_dropped(&l), dropped, "what readers see dropped is what was");
        output_relay_done(&r);
}

/* The owner's budget (supervisor-protocol.h): asked for half a window
 * ahead, obeyed when bgrund says there is no room (the files grow no more,
 * what comes is dropped and counted), kept again once there is room. */
Test(output_relay, its_owners_budget_is_asked_for_ahead_and_obeyed) {
        OutputRelay r;
        int w = -EBADF;
        open_relay_budgeted(&r, UINT64_C(64) << 20, 0, &w);
        cr_assert_eq(r.disk_limit, SUPERVISOR_DISK_WINDOW, "what a job may keep before bgrund says");
        job_writes(&r, w, 0, 400 << 10, 4096);
        cr_assert_not(r.disk_report_due, "far from its limit: nothing to say");
        job_writes(&r, w, 400 << 10, 600 << 10, 4096);
        cr_assert(r.disk_report_due, "half a window before its limit: bgrund is asked");
        output_relay_disk_reported(&r);
        output_relay_set_disk_limit(&r, UINT64_C(2) << 20);
        job_writes(&r, w, 600 << 10, 1600 << 10, 4096);
        cr_assert_eq(output_relay_disk_used(&r), 1600 << 10);

        /* No room: the files grow no more, the output goes on, counted. */
        output_relay_set_disk_limit(&r, output_relay_disk_used(&r));
        job_writes(&r, w, 1600 << 10, 3000 << 10, 4096);
        cr_assert_leq(output_relay_disk_used(&r), 1600 << 10);
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, 3000 << 10);
        cr_assert_eq(dropped, 1400 << 10);

        /* Room again: kept again. */
        output_relay_set_disk_limit(&r, UINT64_C(10) << 20);
        job_writes(&r, w, 3000 << 10, 3500 << 10, 4096);
        cr_assert_gt(output_relay_disk_used(&r), 1600 << 10);
        cr_assert_leq(output_relay_disk_used(&r), 2100 << 10, "what the files hold, not the ring's room");
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(dropped, 1400 << 10, "nothing more dropped once there is room");
        safe_close(w);
        output_relay_finish(&r);
        output_relay_done(&r);
}

/* At its limit with no answer yet, the pipe waits rather than drops. */
Test(output_relay, at_its_limit_the_pipe_waits_for_an_answer) {
        OutputRelay r;
        int w = -EBADF;
        open_relay_budgeted(&r, UINT64_C(64) << 20, 0, &w);
        job_writes(&r, w, 0, SUPERVISOR_DISK_WINDOW, 4096);
        cr_assert_eq(output_relay_disk_used(&r), SUPERVISOR_DISK_WINDOW);
        uint8_t buf[10000] = {};
        cr_assert_eq(loop_write(w, buf, sizeof buf), 0);
        cr_assert_eq(output_relay_pump(&r, UINT64_C(8) << 20), 0);
        cr_assert_eq(output_relay_disk_used(&r), SUPERVISOR_DISK_WINDOW, "nothing past the limit");
        cr_assert_gt(output_relay_hold_usec(&r), 0, "the pipe waits");
        cr_assert(output_relay_awaits_budget(&r), "the job's end must wait for the answer too");
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(dropped, 0, "nothing dropped while it waits");
        output_relay_set_disk_limit(&r, UINT64_C(4) << 20);
        cr_assert_eq(output_relay_hold_usec(&r), 0, "an answer ends the wait");
        cr_assert_not(output_relay_awaits_budget(&r), "nor does the job's end wait any more");
        cr_assert_eq(output_relay_pump(&r, UINT64_C(8) << 20), 0);
        cr_assert_eq(output_relay_disk_used(&r), SUPERVISOR_DISK_WINDOW + sizeof buf);
        safe_close(w);
        output_relay_finish(&r);
        output_relay_done(&r);
}

/* At its limit when the job ends, the rest is dropped and counted: no
 * answer can come any more, and nothing is lost uncounted. */
Test(output_relay, at_its_limit_at_the_end_the_rest_is_counted) {
        OutputRelay r;
        int w = -EBADF;
        open_relay_budgeted(&r, UINT64_C(64) << 20, 0, &w);
        job_writes(&r, w, 0, SUPERVISOR_DISK_WINDOW, 4096);
        uint8_t buf[10000] = {};
        cr_assert_eq(loop_write(w, buf, sizeof buf), 0);
        safe_close(w);
        output_relay_finish(&r);
        cr_assert(r.eof, "all of the pipe read");
        uint64_t bytes, dropped;
        output_relay_summary(&r, &bytes, &dropped);
        cr_assert_eq(bytes, SUPERVISOR_DISK_WINDOW + sizeof buf);
        cr_assert_eq(dropped, sizeof buf);
        output_relay_done(&r);
}
