/* SPDX-License-Identifier: MIT */
/* cgroup.c's reading of cgroup.events, on a plain directory that carries the
 * same file names (no root, no cgroupfs needed). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "macro.h"

static char tmpdir[] = "/tmp/test-cgroup.XXXXXX";
static int dfd = -EBADF;

static void put(const char *name, const char *content) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

static void setup(void) {
        cr_assert_not_null(mkdtemp(tmpdir));
        dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dfd, 0);
        put("cgroup.procs", "");
}

static void teardown(void) {
        safe_close(dfd);
        (void) rm_rf_at(AT_FDCWD, tmpdir);
}

TestSuite(cgroup, .init = setup, .fini = teardown);

Test(cgroup, populated_is_read_from_cgroup_events) {
        put("cgroup.events", "populated 1\nfrozen 0\n");
        cr_assert_eq(cgroup_is_populated(dfd), 1);
        put("cgroup.events", "populated 0\nfrozen 0\n");
        cr_assert_eq(cgroup_is_populated(dfd), 0);
        put("cgroup.events", "frozen 0\n");
        cr_assert_eq(cgroup_is_populated(dfd), -EBADMSG);
}

/* systemd removes a unit's cgroup as soon as it empties; a teardown that
 * looks after that must see "empty", not an error. */
Test(cgroup, a_removed_cgroup_is_empty) {
        put("cgroup.events", "populated 1\n");
        cr_assert_eq(unlinkat(dfd, "cgroup.events", 0), 0);
        cr_assert_eq(unlinkat(dfd, "cgroup.procs", 0), 0);
        cr_assert_eq(rmdir(tmpdir), 0);
        cr_assert_eq(cgroup_is_populated(dfd), 0);
        cr_assert_eq(cgroup_kill(dfd), 0);
        cr_assert_eq(cgroup_wait_empty(dfd, USEC_PER_SEC), 0);
}

/* A cgroup that exists but has no cgroup.kill is an old kernel. */
Test(cgroup, missing_cgroup_kill_is_not_supported) {
        cr_assert_eq(cgroup_kill(dfd), -EOPNOTSUPP);
        put("cgroup.kill", "");
        cr_assert_eq(cgroup_kill(dfd), 0);
}

/* An existing cgroup whose cgroup.events cannot be read is an error, never
 * "empty". */
Test(cgroup, unreadable_events_of_an_existing_cgroup_is_an_error) {
        cr_assert_eq(cgroup_is_populated(dfd), -ENOENT);
}

/* cgroup.procs as the kernel writes it: one pid a line, each line ended. */
Test(cgroup, pids_are_read_from_cgroup_procs) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 99;
        cr_assert_eq(cgroup_read_pids(dfd, 4, &pids, &n), 0);
        cr_assert_eq(n, 0);
        cr_assert_null(pids);

        put("cgroup.procs", "12\n4194304\n7\n");
        cr_assert_eq(cgroup_read_pids(dfd, 4, &pids, &n), 0);
        cr_assert_eq(n, 3);
        cr_assert_eq(pids[0], 12);
        cr_assert_eq(pids[1], 4194304);
        cr_assert_eq(pids[2], 7);
}

/* More than the caller bounds it to is refused, never cut short: a caller
 * that signals or checks every process must not miss one. */
Test(cgroup, more_pids_than_asked_for_are_refused) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n;
        put("cgroup.procs", "1\n2\n3\n");
        cr_assert_eq(cgroup_read_pids(dfd, 2, &pids, &n), -E2BIG);
        cr_assert_null(pids);
        put("cgroup.procs", "1\n2\n");
        cr_assert_eq(cgroup_read_pids(dfd, 2, &pids, &n), 0);
        cr_assert_eq(n, 2);
}

Test(cgroup, a_line_that_is_no_pid_is_refused) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n;
        const char *bad[] = { "12\nx\n", "0\n", "-3\n", "12", "12 \n", "99999999999\n" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                put("cgroup.procs", bad[i]);
                cr_assert_eq(cgroup_read_pids(dfd, 8, &pids, &n), -EBADMSG, "%s", bad[i]);
                cr_assert_null(pids);
        }
}

Test(cgroup, pids_of_a_removed_cgroup_are_an_error) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n;
        cr_assert_eq(unlinkat(dfd, "cgroup.procs", 0), 0);
        cr_assert_eq(cgroup_read_pids(dfd, 8, &pids, &n), -ENOENT);
}
