/* SPDX-License-Identifier: MIT */
/* Reading a job's output files by their layout, as bgrund does: states
 * written here by hand, in a temporary directory. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "output-store.h"

static char dir[] = "/tmp/bgrun-test-output-store.XXXXXX";
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

TestSuite(output_store, .init = setup, .fini = teardown);

static uint64_t put(const char *name, const char *data) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(loop_write(fd, data, strlen(data)), 0);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        return (uint64_t) st.st_ino;
}

static void put_state(const OutputLayout *l, uint64_t ino) {
        _cleanup_close_ int fd = openat(dir_fd, JOB_OUTPUT_STATE_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(output_state_store(fd, l, ino), 0);
}

/* ReadOutput's answer at offset: the bytes and where they start. */
static char *read_at(uint64_t offset, size_t max, uint64_t *ret_start, uint64_t *ret_total) {
        static char buf[256];
        size_t n = 0;
        cr_assert_eq(output_store_read(dir_fd, offset, buf, MIN(max, sizeof buf - 1), ret_start, &n, ret_total), 0);
        buf[n] = '\0';
        return buf;
}

static char *read_fd(int fd) {
        static char buf[256];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        cr_assert_geq(n, 0);
        buf[n] = '\0';
        return buf;
}

Test(output_store, without_a_state_the_output_is_all_there) {
        uint64_t start, total;
        put("output", "hello world");
        OutputLayout l;
        cr_assert_eq(output_store_layout(dir_fd, &l), 0);
        cr_assert_eq(l.phase, OUTPUT_LINEAR);
        cr_assert_eq(l.total, 11);
        cr_assert_str_eq(read_at(6, 100, &start, &total), "world");
        cr_assert_eq(start, 6);
        cr_assert_eq(total, 11);
        cr_assert_str_eq(read_at(11, 100, &start, &total), "");
        cr_assert_eq(start, 11);
        cr_assert_str_eq(read_at(50, 100, &start, &total), "", "past the end");
        cr_assert_eq(start, 50);

        /* An empty state file, as the supervisor may leave it: the same. */
        put(JOB_OUTPUT_STATE_FILE, "");
        cr_assert_str_eq(read_at(0, 5, &start, &total), "hello");

        _cleanup_close_ int fd = -EBADF;
        cr_assert_eq(output_store_open_kept(dir_fd, &fd, &l), 0);
        cr_assert_str_eq(read_fd(fd), "hello world");
        cr_assert_eq(l.phase, OUTPUT_LINEAR);
}

/* A job with a cap of 8 that wrote "0123456789abcdef": head "0123",
 * dropped "456789ab", tail "cdef". */
static void ring_layout(OutputLayout *l) {
        output_layout_init(l, 8);
        *l = (OutputLayout) { .phase = OUTPUT_RING, .cap = 8, .total = 16, .head = 4, .tail_start = 12,
                              .frozen = 4, .ring_origin = 8, .ring_size = 4, .generation = 2 };
}

Test(output_store, a_ring_reads_by_offset_and_has_no_descriptor) {
        OutputLayout l;
        uint64_t start, total;
        ring_layout(&l);
        uint64_t ino = put("output", "0123");
        put(JOB_OUTPUT_TAIL_FILE, "cdef"); /* 12..15 at ring positions 0..3 */
        put_state(&l, ino);

        cr_assert_str_eq(read_at(0, 100, &start, &total), "0123", "the head, and no further");
        cr_assert_eq(total, 16);
        cr_assert_str_eq(read_at(2, 100, &start, &total), "23");
        cr_assert_str_eq(read_at(4, 100, &start, &total), "cdef", "in the gap: what follows it");
        cr_assert_eq(start, 12);
        cr_assert_str_eq(read_at(7, 2, &start, &total), "cd");
        cr_assert_eq(start, 12);
        cr_assert_str_eq(read_at(14, 100, &start, &total), "ef");
        cr_assert_eq(start, 14);
        cr_assert_str_eq(read_at(16, 100, &start, &total), "");
        cr_assert_eq(start, 16);

        _cleanup_close_ int fd = -EBADF;
        cr_assert_eq(output_store_open_kept(dir_fd, &fd, NULL), -EOPNOTSUPP);
        uint64_t bytes;
        cr_assert_eq(output_store_layout(dir_fd, &l), 0);
        cr_assert_eq(l.total, 16);
        cr_assert_eq(output_store_disk_size(dir_fd, &bytes), 0);
        cr_assert_eq(bytes, 8);
}

Test(output_store, a_compacted_output_is_found_before_and_after_its_rename) {
        OutputLayout ring, c;
        uint64_t start, total;
        ring_layout(&ring);
        output_layout_compacted(&ring, &c);
        char marker[OUTPUT_MARKER_MAX];
        output_marker(8, marker);
        char want[128];
        snprintf(want, sizeof want, "0123%scdef", marker);

        /* The supervisor names the new file in the state first. */
        put("output", "0123456789ab");
        uint64_t ino = put(JOB_OUTPUT_NEW_FILE, want);
        put_state(&c, ino);
        cr_assert_str_eq(read_at(4, 100, &start, &total), "cdef");
        cr_assert_eq(start, 12);
        _cleanup_close_ int fd = -EBADF;
        cr_assert_eq(output_store_open_kept(dir_fd, &fd, NULL), 0);
        cr_assert_str_eq(read_fd(fd), want);
        fd = safe_close(fd);

        cr_assert_eq(renameat(dir_fd, JOB_OUTPUT_NEW_FILE, dir_fd, "output"), 0);
        cr_assert_str_eq(read_at(0, 100, &start, &total), "0123");
        cr_assert_str_eq(read_at(13, 100, &start, &total), "def");
        cr_assert_eq(output_store_open_kept(dir_fd, &fd, &c), 0);
        cr_assert_str_eq(read_fd(fd), want);
        cr_assert_eq(c.phase, OUTPUT_COMPACTED);
}

Test(output_store, a_state_of_another_file_is_not_trusted) {
        OutputLayout ring, c;
        uint64_t start = 99, total = 99;
        ring_layout(&ring);
        output_layout_compacted(&ring, &c);
        uint64_t ino = put("output", "something else entirely");
        put_state(&c, ino + 1000);
        _cleanup_close_ int fd = -EBADF;
        cr_assert_eq(output_store_open_kept(dir_fd, &fd, NULL), -EAGAIN);
        cr_assert_str_eq(read_at(0, 100, &start, &total), "", "nothing, rather than bytes of another layout");
        cr_assert_eq(start, 0);
}

Test(output_store, a_bad_state_is_an_error) {
        put("output", "0123");
        put(JOB_OUTPUT_STATE_FILE, "not a state");
        uint64_t start, total;
        size_t n;
        char buf[16];
        OutputLayout l;
        cr_assert_eq(output_store_read(dir_fd, 0, buf, sizeof buf, &start, &n, &total), -EBADMSG);
        cr_assert_eq(output_store_layout(dir_fd, &l), -EBADMSG);
}
