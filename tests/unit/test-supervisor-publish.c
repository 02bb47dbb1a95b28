/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>

#include "fileio.h"
#include "grant.h"
#include "job-store.h"
#include "macro.h"
#include "publish.h"

static char dir[] = "/tmp/bgrun-test-publish.XXXXXX";
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

TestSuite(supervisor_publish, .init = setup, .fini = teardown);

static char payload_cgroup[] = "/bgrun.slice/bgrun-job-abc0123456.scope/payload";

static JobResult read_result(void) {
        JobResult res = {};
        cr_assert_eq(job_store_read_result(dir_fd, &res), 0);
        return res;
}

static GrantState grant_state(void) {
        _cleanup_(grant_done) Grant g = {};
        cr_assert_eq(grant_read(dir_fd, &g), 0);
        return g.state;
}

Test(supervisor_publish, normal_end_in_a_cgroup_is_contained_and_releases_the_grant) {
        cr_assert_eq(grant_open(dir_fd, MECHANISM_SYSTEMD, "u.scope", "/bgrun.slice/u.scope", 1000), 0);
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_SYSTEMD };
        JobRun run = { .pid = 42, .cgroup = payload_cgroup };
        cr_assert_eq(publish_outcome(dir_fd, &spec, &(JobOutcome) {
                .status = JOB_EXITED, .exit_code = 3, .executed = true, .run = &run,
                .dead = true, .method = TEARDOWN_CGROUP_KILL,
        }), 0);

        JobResult res = read_result();
        cr_assert_eq(res.status, JOB_EXITED);
        cr_assert_eq(res.exit_code, 3);
        cr_assert_eq(res.signal, 0);
        cr_assert(res.executed);
        cr_assert(res.contained);
        cr_assert_not(res.timed_out);
        cr_assert(res.dead);
        cr_assert_eq(res.method, TEARDOWN_CGROUP_KILL);
        cr_assert_gt(res.finished_at, 0);
        cr_assert_eq(res.confirmed_at, res.finished_at);
        cr_assert_str_eq(res.reason, "");
        cr_assert_eq(grant_state(), GRANT_RELEASED);
}

Test(supervisor_publish, a_process_tree_is_never_contained) {
        cr_assert_eq(grant_open(dir_fd, MECHANISM_PROCESS_GROUP, "", "", 1000), 0);
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_PROCESS_GROUP };
        JobRun run = { .pid = 42 };
        cr_assert_eq(publish_outcome(dir_fd, &spec, &(JobOutcome) {
                .status = JOB_KILLED, .exit_code = -1, .signal = 9, .executed = true, .run = &run,
                .dead = true, .method = TEARDOWN_PROCESS_TREE,
        }), 0);
        JobResult res = read_result();
        cr_assert_eq(res.status, JOB_KILLED);
        cr_assert_eq(res.signal, 9);
        cr_assert_not(res.contained);
        cr_assert_eq(res.method, TEARDOWN_PROCESS_TREE);
}

Test(supervisor_publish, timed_out_follows_the_status) {
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_SYSTEMD };
        JobRun run = { .pid = 42, .cgroup = payload_cgroup };
        cr_assert_eq(publish_outcome(dir_fd, &spec, &(JobOutcome) {
                .status = JOB_TIMED_OUT, .exit_code = -1, .signal = 9, .executed = true, .run = &run,
                .dead = true, .method = TEARDOWN_CGROUP_KILL,
        }), 0);
        JobResult res = read_result();
        cr_assert_eq(res.status, JOB_TIMED_OUT);
        cr_assert(res.timed_out);
}

Test(supervisor_publish, an_unconfirmed_teardown_keeps_the_grant_open) {
        cr_assert_eq(grant_open(dir_fd, MECHANISM_SYSTEMD, "u.scope", "/bgrun.slice/u.scope", 1000), 0);
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_SYSTEMD };
        JobRun run = { .pid = 42, .cgroup = payload_cgroup };
        cr_assert_eq(publish_outcome(dir_fd, &spec, &(JobOutcome) {
                .status = JOB_EXITED, .executed = true, .run = &run,
                .dead = false, .method = TEARDOWN_CGROUP_KILL,
        }), 0);
        JobResult res = read_result();
        cr_assert_not(res.dead);
        cr_assert_eq(res.confirmed_at, 0);
        cr_assert_eq(grant_state(), GRANT_OPEN);
}

Test(supervisor_publish, an_unrecorded_run_is_not_contained) {
        /* The command ran in its cgroup, but run.json could not be written:
         * the result must agree with what readers of the record see. */
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_SYSTEMD };
        cr_assert_eq(publish_outcome(dir_fd, &spec, &(JobOutcome) {
                .status = JOB_FAILED, .exit_code = 1, .executed = true, .run = NULL,
                .dead = true, .method = TEARDOWN_CGROUP_KILL, .reason = "cannot record the running job",
        }), 0);
        JobResult res = read_result();
        cr_assert(res.executed);
        cr_assert_not(res.contained);
        cr_assert_str_eq(res.reason, "cannot record the running job");
}

Test(supervisor_publish, setup_failure_ran_nothing_and_is_dead) {
        cr_assert_eq(grant_open(dir_fd, MECHANISM_SYSTEMD, "u.scope", "/bgrun.slice/u.scope", 1000), 0);
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_SYSTEMD };
        cr_assert_eq(publish_setup_failure(dir_fd, &spec, -EACCES, "change to the working directory"), -EACCES);
        JobResult res = read_result();
        cr_assert_eq(res.status, JOB_FAILED);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_not(res.executed);
        cr_assert_not(res.contained);
        cr_assert(res.dead);
        cr_assert_eq(res.method, TEARDOWN_NOT_STARTED);
        cr_assert_gt(res.confirmed_at, 0);
        cr_assert_str_eq(res.reason, "supervisor setup failed: change to the working directory: Permission denied");
        cr_assert_eq(grant_state(), GRANT_RELEASED);
}

Test(supervisor_publish, a_failed_write_is_reported) {
        JobSpec spec = { .id = "abc0123456", .mechanism = MECHANISM_SYSTEMD };
        cr_assert_lt(publish_outcome(-EBADF, &spec, &(JobOutcome) { .status = JOB_EXITED }), 0);
}
