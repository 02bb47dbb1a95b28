/* SPDX-License-Identifier: MIT */
/* The check of a job's cwd, which the supervisor makes and bgrund does not:
 * the child that becomes the command enters cwd as the job's user, with
 * that user's groups, and a failure is told apart from every other one;
 * the supervisor then says so on its readiness pipe (SUPERVISOR_CWD_REFUSED)
 * and publishes no record. Checking as another user needs root: those
 * tests skip without it. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "exec-child.h"
#include "fileio.h"
#include "job-store.h"
#include "macro.h"
#include "supervise.h"
#include "supervisor-protocol.h"

/* Not root's, and in no group of the test's. */
#define USER_UID 65534
#define OTHER_GID 54321

static char dir[] = "/tmp/bgrun-test-cwd.XXXXXX";
static int dir_fd = -EBADF;
static char path[256];

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
        /* Traversable by the job's user; what is below decides. */
        cr_assert_eq(chmod(dir, 0755), 0);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static void teardown(void) {
        if (dir_fd >= 0) {
                safe_close(dir_fd);
                rm_rf_at(AT_FDCWD, dir);
        }
}

TestSuite(supervisor_cwd, .init = setup, .fini = teardown);

static const char *at(const char *name) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        return path;
}

static void need_root(void) {
        if (geteuid() != 0)
                cr_skip_test("checking cwd as another user needs root");
}

static int wait_exit_status(pid_t pid) {
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* Start `true` in cwd as uid with groups, the way the supervisor starts a
 * command: 0 when it exec'd (and exited 0), 1 and *ret when not. */
static int start_in(const char *cwd, uid_t uid, gid_t gid, gid_t *groups, size_t n_groups, ExecFailure *ret) {
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_PROCESS_GROUP), 0);
        _cleanup_close_ int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
        cr_assert_geq(out, 0);
        char command[] = "true";
        _cleanup_free_ char *where = strdup(cwd);
        cr_assert_not_null(where);
        JobSpec spec = { .command = command, .cwd = where, .uid = uid, .gid = gid, .groups = groups,
                         .n_groups = n_groups };
        char *env[] = { NULL };
        pid_t pid;
        _cleanup_close_ int report_fd = -EBADF;
        const char *step = NULL;
        cr_assert_eq(exec_child_fork(&(ExecChild) { .spec = &spec, .containment = &c, .output_fd = out, .env = env },
                                     &pid, &report_fd, &step), 0);
        int r = exec_child_wait(report_fd, ret);
        int status = wait_exit_status(pid);
        cr_assert_eq(status, r ? 127 : 0, "exit status %d", status);
        return r;
}

static void assert_refused(const char *cwd, gid_t *groups, size_t n_groups, int error) {
        ExecFailure f = {};
        cr_assert_eq(start_in(cwd, USER_UID, USER_UID, groups, n_groups, &f), 1, "%s was entered", cwd);
        cr_assert_eq(f.refused, EXEC_REFUSED_CWD, "%s: a failure to %s was not told as the cwd's", cwd, f.step);
        cr_assert_eq(f.error, error, "%s: %s", cwd, strerror(-f.error));
        cr_assert_str_eq(f.step, EXEC_CHILD_STEP_CWD);
}

Test(supervisor_cwd, a_missing_directory_is_refused_as_the_cwd_s) {
        /* As whoever runs the test: dropping to oneself needs no root. */
        ExecFailure f = {};
        cr_assert_eq(start_in(at("nonexistent"), geteuid(), getegid(), NULL, 0, &f), 1);
        cr_assert_eq(f.refused, EXEC_REFUSED_CWD);
        cr_assert_eq(f.error, -ENOENT);
}

Test(supervisor_cwd, a_directory_is_entered) {
        cr_assert_eq(mkdirat(dir_fd, "open", 0755), 0);
        ExecFailure f = {};
        cr_assert_eq(start_in(at("open"), geteuid(), getegid(), NULL, 0, &f), 0, "failed to %s: %s", f.step,
                     strerror(-f.error));
}

Test(supervisor_cwd, what_the_user_cannot_enter_is_refused_whatever_root_could) {
        need_root();
        cr_assert_eq(mkdirat(dir_fd, "private", 0700), 0);
        cr_assert_eq(mkdirat(dir_fd, "private/inside", 0755), 0);
        cr_assert_eq(write_file_atomic_at(dir_fd, "file", "x", 1, 0644, 0), 0);
        gid_t groups[] = { USER_UID };
        assert_refused(at("private"), groups, 1, -EACCES);
        assert_refused(at("private/inside"), groups, 1, -EACCES);
        assert_refused(at("file"), groups, 1, -ENOTDIR);
        assert_refused(at("nonexistent"), groups, 1, -ENOENT);
}

Test(supervisor_cwd, the_users_groups_count_and_only_they) {
        need_root();
        cr_assert_eq(mkdirat(dir_fd, "group", 0750), 0);
        cr_assert_eq(fchownat(dir_fd, "group", 0, OTHER_GID, 0), 0);
        gid_t with[] = { USER_UID, OTHER_GID }, without[] = { USER_UID };
        ExecFailure f = {};
        cr_assert_eq(start_in(at("group"), USER_UID, USER_UID, with, 2, &f), 0,
                     "a member of the directory's group could not enter it: failed to %s: %s", f.step,
                     strerror(-f.error));
        assert_refused(at("group"), without, 1, -EACCES);
}

/* The whole supervisor, for a job of the process_group mechanism whose
 * user cannot enter its cwd. */
static int supervise_job(const char *cwd, int ready_fd) {
        _cleanup_(supervisor_done) Supervisor s = SUPERVISOR_NULL;
        s.dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        s.ready_fd = ready_fd;
        gid_t *groups = calloc(1, sizeof(gid_t));
        cr_assert_not_null(groups);
        groups[0] = USER_UID;
        s.spec = (JobSpec) {
                .id = "abc0123456",
                .mechanism = MECHANISM_PROCESS_GROUP,
                .command = strdup("touch ran"),
                .cwd = strdup(cwd),
                .session_id = strdup(""),
                .user = strdup("nobody"),
                .home = strdup("/"),
                .shell = strdup("/bin/sh"),
                .uid = USER_UID,
                .gid = USER_UID,
                .groups = groups,
                .n_groups = 1,
        };
        cr_assert(s.spec.command && s.spec.cwd && s.spec.session_id && s.spec.user && s.spec.home && s.spec.shell);
        return supervise(&s);
}

Test(supervisor_cwd, the_supervisor_tells_bgrund_and_leaves_no_record) {
        need_root();
        cr_assert_eq(mkdirat(dir_fd, "private", 0700), 0);
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        _cleanup_close_ int ready_read = p[0];
        cr_assert_lt(supervise_job(at("private"), p[1]), 0);

        char buf[2];
        cr_assert_eq(read(ready_read, buf, sizeof buf), 1, "not exactly one byte on the readiness pipe");
        cr_assert_eq(buf[0], SUPERVISOR_CWD_REFUSED);
        cr_assert_eq(read(ready_read, buf, sizeof buf), 0, "the readiness pipe was left open");
        JobResult res = {};
        cr_assert_eq(job_store_read_result(dir_fd, &res), -ENOENT, "a result was published");
        cr_assert_eq(faccessat(dir_fd, "private/ran", F_OK, 0), -1, "the command ran");
}

Test(supervisor_cwd, with_nobody_to_tell_the_refusal_is_a_failed_record) {
        need_root();
        cr_assert_eq(mkdirat(dir_fd, "private", 0700), 0);
        cr_assert_lt(supervise_job(at("private"), -EBADF), 0);
        JobResult res = {};
        cr_assert_eq(job_store_read_result(dir_fd, &res), 0, "no result was published");
        cr_assert_eq(res.status, JOB_FAILED);
        cr_assert_not(res.executed);
        cr_assert(strstr(res.reason, EXEC_CHILD_STEP_CWD), "reason: %s", res.reason);
}
