/* SPDX-License-Identifier: MIT */
/* The teardown slot (job-teardown.h): what Kill answers from, and what a
 * reader finds of it after a crash or a power loss. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "job-teardown.h"
#include "macro.h"

static char dir[] = "/tmp/test-job-teardown.XXXXXX";
static int dir_fd = -EBADF;

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static void teardown(void) {
        dir_fd = safe_close(dir_fd);
        _cleanup_close_ int tmp = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void) rm_rf_at(tmp, dir + strlen("/tmp/"));
}

TestSuite(job_teardown, .init = setup, .fini = teardown);

static const JobTeardown killed = {
        .status = JOB_KILLED, .dead = true, .method = TEARDOWN_CGROUP_KILL, .confirmed_at = 1700000000123456,
};

Test(job_teardown, no_slot_and_an_empty_one_hold_no_teardown) {
        JobTeardown t;
        cr_assert_eq(job_teardown_read(dir_fd, &t), -ENOENT);
        cr_assert_eq(job_teardown_create_slot(dir_fd), 0);
        cr_assert_eq(job_teardown_read(dir_fd, &t), -ENOENT);
}

Test(job_teardown, what_is_written_is_read_back_whole) {
        cr_assert_eq(job_teardown_create_slot(dir_fd), 0);
        cr_assert_eq(job_teardown_write(dir_fd, &killed), 0);
        JobTeardown t;
        cr_assert_eq(job_teardown_read(dir_fd, &t), 0);
        cr_assert_eq(t.status, JOB_KILLED);
        cr_assert(t.dead);
        cr_assert_eq(t.method, TEARDOWN_CGROUP_KILL);
        cr_assert_eq(t.confirmed_at, killed.confirmed_at);
        /* One slot, one size: the write never grows the file past it. */
        struct stat st;
        cr_assert_eq(fstatat(dir_fd, JOB_TEARDOWN_FILE, &st, 0), 0);
        cr_assert_eq(st.st_size, JOB_TEARDOWN_SLOT_SIZE);
}

Test(job_teardown, a_timed_out_end_keeps_its_status) {
        JobTeardown in = killed, t;
        in.status = JOB_TIMED_OUT;
        in.method = TEARDOWN_SIGNAL;
        cr_assert_eq(job_teardown_write(dir_fd, &in), 0);
        cr_assert_eq(job_teardown_read(dir_fd, &t), 0);
        cr_assert_eq(t.status, JOB_TIMED_OUT);
        cr_assert_eq(t.method, TEARDOWN_SIGNAL);
}

/* A power loss during the write: the slot's blocks as they were (zeros,
 * the size already grown), or the JSON's sector cut short. Neither is a
 * teardown, and nobody was told of one. */
Test(job_teardown, what_a_power_loss_leaves_of_a_write_is_no_teardown) {
        char zeros[JOB_TEARDOWN_SLOT_SIZE] = {};
        cr_assert_eq(write_file_atomic_at(dir_fd, JOB_TEARDOWN_FILE, zeros, sizeof zeros, 0600, 0), 0);
        JobTeardown t;
        cr_assert_eq(job_teardown_read(dir_fd, &t), -ENOENT);

        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_teardown_to_json(&killed, &json), 0);
        char cut[JOB_TEARDOWN_SLOT_SIZE] = {};
        memcpy(cut, json, strlen(json) / 2);
        cr_assert_eq(write_file_atomic_at(dir_fd, JOB_TEARDOWN_FILE, cut, sizeof cut, 0600, 0), 0);
        cr_assert_lt(job_teardown_read(dir_fd, &t), 0);
}

Test(job_teardown, only_an_end_from_outside_has_a_slot) {
        JobTeardown t;
        cr_assert_eq(job_teardown_from_json("{\"status\":\"exited\",\"dead\":true,\"method\":\"cgroup.kill\","
                                            "\"confirmed_at\":1}", &t), -EBADMSG);
        cr_assert_eq(job_teardown_from_json("{\"status\":\"killed\",\"dead\":true,\"method\":\"\","
                                            "\"confirmed_at\":1}", &t), -EBADMSG);
        cr_assert_eq(job_teardown_from_json("{\"status\":\"killed\",\"dead\":true,\"method\":\"cgroup.kill\"}", &t),
                     -EBADMSG);
        cr_assert_eq(job_teardown_from_json("{\"format\":99,\"status\":\"killed\",\"dead\":true,"
                                            "\"method\":\"cgroup.kill\",\"confirmed_at\":1}", &t), -EPROTONOSUPPORT);
}

Test(job_teardown, the_lock_has_one_holder_and_bgrund_never_waits_for_it) {
        cr_assert_eq(job_teardown_lock(dir_fd, true, &(int) { 0 }), -ENOENT, "no slot, no lock");
        cr_assert_eq(job_teardown_create_slot(dir_fd), 0);
        _cleanup_close_ int held = -EBADF, other = -EBADF;
        cr_assert_eq(job_teardown_lock(dir_fd, false, &held), 0);
        cr_assert_eq(job_teardown_lock(dir_fd, false, &other), -EAGAIN);
        held = safe_close(held);
        cr_assert_eq(job_teardown_lock(dir_fd, false, &other), 0, "free again once its holder let go");
}

Test(job_teardown, a_prepared_slot_has_its_block_and_no_teardown_and_is_never_wiped) {
        cr_assert_eq(job_teardown_prepare(dir_fd), 0, "no slot: nothing to do");
        cr_assert_eq(job_teardown_create_slot(dir_fd), 0);
        cr_assert_eq(job_teardown_prepare(dir_fd), 0);
        struct stat st;
        cr_assert_eq(fstatat(dir_fd, JOB_TEARDOWN_FILE, &st, 0), 0);
        cr_assert_eq(st.st_size, JOB_TEARDOWN_SLOT_SIZE);
        JobTeardown t;
        cr_assert_eq(job_teardown_read(dir_fd, &t), -ENOENT, "zeros are no teardown");
        cr_assert_eq(job_teardown_write(dir_fd, &killed), 0);
        cr_assert_eq(job_teardown_prepare(dir_fd), 0);
        cr_assert_eq(job_teardown_read(dir_fd, &t), 0, "a written slot is never prepared again");
        cr_assert_eq(t.confirmed_at, killed.confirmed_at);
}

Test(job_teardown, a_slot_being_decided_is_not_prepared) {
        cr_assert_eq(job_teardown_create_slot(dir_fd), 0);
        _cleanup_close_ int held = -EBADF;
        cr_assert_eq(job_teardown_lock(dir_fd, false, &held), 0);
        cr_assert_eq(job_teardown_prepare(dir_fd), -EAGAIN);
        struct stat st;
        cr_assert_eq(fstatat(dir_fd, JOB_TEARDOWN_FILE, &st, 0), 0);
        cr_assert_eq(st.st_size, 0);
}
