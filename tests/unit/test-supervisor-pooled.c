/* SPDX-License-Identifier: MIT */
/* A pooled supervisor's side of the go socket (supervisor-protocol.h): what
 * it makes of what bgrund sends. The fork into a real cgroup is the
 * container tests' (test-container.sh). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-passing.h"
#include "macro.h"
#include "pooled.h"
#include "supervisor-protocol.h"

static int sv[2] = { -EBADF, -EBADF }; /* sv[0]: bgrund's end, sv[1]: the pooled one's */

static void setup(void) {
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void teardown(void) {
        safe_close(sv[0]);
        safe_close(sv[1]);
}

TestSuite(supervisor_pooled, .init = setup, .fini = teardown);

Test(supervisor_pooled, a_job_to_run_here) {
        char id[JOB_ID_MAX];
        cr_assert_eq(write(sv[0], "a1b2c3d4e5\nG", 12), 12);
        cr_assert_eq(pooled_wait_for_job(sv[1], id), 0);
        cr_assert_str_eq(id, "a1b2c3d4e5");
        /* The go byte after it stays for the wait for go. */
        char g = 0;
        cr_assert_eq(read(sv[1], &g, 1), 1);
        cr_assert_eq(g, 'G');
}

Test(supervisor_pooled, eof_means_no_job) {
        char id[JOB_ID_MAX];
        sv[0] = safe_close(sv[0]);
        cr_assert_eq(pooled_wait_for_job(sv[1], id), -ECANCELED);
}

Test(supervisor_pooled, eof_after_the_id_means_no_job) {
        char id[JOB_ID_MAX];
        cr_assert_eq(write(sv[0], "a1b2c3d4e5", 10), 10);
        sv[0] = safe_close(sv[0]);
        cr_assert_eq(pooled_wait_for_job(sv[1], id), -ECANCELED);
}

Test(supervisor_pooled, a_bad_id_is_refused) {
        char id[JOB_ID_MAX];
        cr_assert_eq(write(sv[0], "A1B2C3D4E5\n", 11), 11);
        cr_assert_eq(pooled_wait_for_job(sv[1], id), -EINVAL);
}

Test(supervisor_pooled, an_unknown_request_is_refused) {
        char id[JOB_ID_MAX];
        cr_assert_eq(write(sv[0], "a1b2c3d4e5X", 11), 11);
        cr_assert_eq(pooled_wait_for_job(sv[1], id), -EBADMSG);
}

Test(supervisor_pooled, a_fork_without_a_cgroup_is_refused) {
        char id[JOB_ID_MAX];
        cr_assert_eq(write(sv[0], "a1b2c3d4e5", 10), 10);
        cr_assert_eq(fd_send(sv[0], POOL_FORK_INTO_CGROUP, -EBADF, 0), 0);
        cr_assert_eq(pooled_wait_for_job(sv[1], id), -EBADMSG);
}

/* A directory that is no cgroup: clone3 refuses it, nothing is forked, and
 * bgrund is told why. */
Test(supervisor_pooled, a_failed_fork_is_answered_with_its_errno) {
        char id[JOB_ID_MAX];
        _cleanup_close_ int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir, 0);
        cr_assert_eq(write(sv[0], "a1b2c3d4e5", 10), 10);
        cr_assert_eq(fd_send(sv[0], POOL_FORK_INTO_CGROUP, dir, 0), 0);
        int r = pooled_wait_for_job(sv[1], id);
        if (r == 0)
                _exit(0); /* a child after all: it must not go on as the test */
        cr_assert_lt(r, 0);
        unsigned char answer[2] = {};
        cr_assert_eq(read(sv[0], answer, sizeof answer), 2);
        cr_assert_eq(answer[0], POOL_FORK_FAILED);
        cr_assert_eq(answer[1], (unsigned char) -r);
}
