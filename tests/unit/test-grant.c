/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fileio.h"
#include "grant.h"
#include "macro.h"

static char dir[] = "/tmp/bgrun-test-grant.XXXXXX";
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

TestSuite(grant, .init = setup, .fini = teardown);

Test(grant, open_then_release_records_dead) {
        cr_assert_eq(grant_open(dir_fd, MECHANISM_SYSTEMD, "bgrun-job-x.service", "/bgrun.slice/x", 1000), 0);

        Grant g = {};
        cr_assert_eq(grant_read(dir_fd, &g), 0);
        cr_assert_eq(g.state, GRANT_OPEN);
        cr_assert_eq(g.mechanism, MECHANISM_SYSTEMD);
        cr_assert_str_eq(g.unit, "bgrun-job-x.service");
        cr_assert_str_eq(g.cgroup, "/bgrun.slice/x");
        cr_assert_not(g.dead);
        cr_assert_gt(g.opened_at, 0);
        cr_assert_eq(g.owner, 1000);
        grant_done(&g);

        cr_assert_eq(grant_release(dir_fd, TEARDOWN_CGROUP_KILL), 0);
        cr_assert_eq(grant_read(dir_fd, &g), 0);
        cr_assert_eq(g.state, GRANT_RELEASED);
        cr_assert(g.dead);
        cr_assert_str_eq(teardown_method_to_string(g.method), "cgroup.kill");
        cr_assert_geq(g.released_at, g.opened_at);
        uint64_t released_at = g.released_at;
        grant_done(&g);

        /* Idempotent: a second release changes nothing. */
        cr_assert_eq(grant_release(dir_fd, TEARDOWN_PROCESS_TREE), 0);
        cr_assert_eq(grant_read(dir_fd, &g), 0);
        cr_assert_str_eq(teardown_method_to_string(g.method), "cgroup.kill");
        cr_assert_eq(g.released_at, released_at);
        grant_done(&g);
}

Test(grant, reopen_with_another_mechanism_replaces) {
        cr_assert_eq(grant_open(dir_fd, MECHANISM_SYSTEMD, "u.service", "/cg", 1000), 0);
        cr_assert_eq(grant_open(dir_fd, MECHANISM_PROCESS_GROUP, "", "", 1000), 0);
        Grant g = {};
        cr_assert_eq(grant_read(dir_fd, &g), 0);
        cr_assert_eq(g.mechanism, MECHANISM_PROCESS_GROUP);
        cr_assert_eq(g.state, GRANT_OPEN);
        grant_done(&g);
}

Test(grant, release_without_grant_fails) {
        cr_assert_eq(grant_release(dir_fd, TEARDOWN_CGROUP_KILL), -ENOENT);
}

Test(grant, parse_rejects_bad_records) {
        Grant g = {};
        const char *bad[] = {
                "",
                "[]",
                "{\"state\":\"open\"}",
                /* released but not dead: a release is only for a confirmed teardown */
                "{\"state\":\"released\",\"mechanism\":\"systemd\",\"unit\":\"\",\"cgroup\":\"\",\"opened_at\":1,"
                "\"dead\":false,\"method\":\"\",\"released_at\":2}",
                "{\"state\":\"maybe\",\"mechanism\":\"systemd\",\"unit\":\"\",\"cgroup\":\"\",\"opened_at\":1,"
                "\"dead\":false,\"method\":\"\",\"released_at\":0}",
                "{\"state\":\"open\",\"mechanism\":\"chroot\",\"unit\":\"\",\"cgroup\":\"\",\"opened_at\":1,"
                "\"dead\":false,\"method\":\"\",\"released_at\":0}",
                "{\"state\":\"open\",\"mechanism\":\"systemd\",\"unit\":5,\"cgroup\":\"\",\"opened_at\":1,"
                "\"dead\":false,\"method\":\"\",\"released_at\":0}",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_assert_eq(grant_from_json(bad[i], &g), -EBADMSG, "record %zu parsed", i);
}

Test(grant, concurrent_grants_do_not_touch_each_other) {
        /* Two jobs, two directories: releasing one leaves the other open. */
        cr_assert_eq(mkdirat(dir_fd, "a", 0700), 0);
        cr_assert_eq(mkdirat(dir_fd, "b", 0700), 0);
        int a = openat(dir_fd, "a", O_RDONLY | O_DIRECTORY), b = openat(dir_fd, "b", O_RDONLY | O_DIRECTORY);
        cr_assert_eq(grant_open(a, MECHANISM_SYSTEMD, "a.service", "/a", 1000), 0);
        cr_assert_eq(grant_open(b, MECHANISM_SYSTEMD, "b.service", "/b", 1000), 0);
        cr_assert_eq(grant_release(a, TEARDOWN_CGROUP_KILL), 0);
        Grant g = {};
        cr_assert_eq(grant_read(b, &g), 0);
        cr_assert_eq(g.state, GRANT_OPEN);
        cr_assert_str_eq(g.unit, "b.service");
        grant_done(&g);
        close(a);
        close(b);
}
