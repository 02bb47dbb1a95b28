/* SPDX-License-Identifier: MIT */
/* The supervisor's relay: bytes into the pipe, the job's output files out,
 * read back as bgrund reads them. No root, no job: this process writes. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static void teardown(void) {
        safe_close(dir_fd);
        rm_rf_at(AT_FDCWD, dir);
}

TestSuite(output_relay, .init = setup, .fini = teardown);

static uint8_t job_byte(uint64_t l) {
        return (uint8_t) ('a' + (l * 7 + l / 26) % 26);
}

static bool exists(const char *name) {
        return faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A job that writes total bytes in writes of chunk, relayed as the
 * supervisor does between its other work; then its end. */
static void run_job(OutputRelay *r, uint64_t cap, uint64_t keep_free, uint64_t total, size_t chunk) {
        JobSpec spec = { .id = "abc0123456", .output_max_bytes = cap, .keep_free = keep_free };
        const char *step = NULL;
        int w = -EBADF;
        *r = OUTPUT_RELAY_NULL;
        cr_assert_eq(output_relay_open(r, dir_fd, &spec, &w, &step), 0, "%s", step);

        uint8_t *buf = malloc(chunk);
        for (uint64_t at = 0; at < total;) {
                size_t n = (size_t) MIN((uint64_t) chunk, total - at);
                for (size_t i = 0; i < n; i++)
                        buf[i] = job_byte(at + i);
                cr_assert_eq(loop_write(w, buf, n), 0);
                at += n;
                /* The pipe holds 64 KiB: read it as the poll loop would. */
                cr_assert_geq(output_relay_pump(r, UINT64_C(8) << 20), 0);
        }
        free(buf);
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
        cr_assert_eq(job_store_output_disk_size(dir_fd, &disk), 0);
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
} Pumping;

static void *pump_until_eof(void *userdata) {
        Pumping *p = userdata;
        while (!p->relay->eof) {
                struct pollfd q = { .fd = p->relay->pipe_fd, .events = POLLIN };
                (void) poll(&q, 1, -1);
                cr_assert_geq(output_relay_pump(p->relay, UINT64_C(1) << 20), 0);
        }
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
