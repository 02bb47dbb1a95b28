/* SPDX-License-Identifier: MIT */
/* The forked child: the report protocol, the containment's enter step, and
 * (as root, which dropping privileges needs) a real exec. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "exec-child.h"
#include "fileio.h"
#include "macro.h"
#include "sandbox-plan.h"

Test(supervisor_exec_child, a_whole_report_is_a_failure) {
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        ExecFailure sent = { .error = -EACCES, .step = "change to the working directory" };
        cr_assert_eq(write(p[1], &sent, sizeof sent), (ssize_t) sizeof sent);
        safe_close(p[1]);
        ExecFailure got = {};
        cr_assert_eq(exec_child_wait(p[0], &got), 1);
        cr_assert_eq(got.error, -EACCES);
        cr_assert_str_eq(got.step, "change to the working directory");
        safe_close(p[0]);
}

Test(supervisor_exec_child, a_closed_or_short_pipe_means_exec) {
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(write(p[1], "x", 1), 1);
        safe_close(p[1]);
        ExecFailure got = { .error = 42 };
        cr_assert_eq(exec_child_wait(p[0], &got), 0);
        cr_assert_eq(got.error, 42, "untouched");
        safe_close(p[0]);

        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        safe_close(p[1]);
        cr_assert_eq(exec_child_wait(p[0], &got), 0);
        safe_close(p[0]);
}

static int fake_enter_failing(const PayloadContainment *c, const char **ret_step) {
        *ret_step = "enter the fake containment";
        return -EIO;
}

static char sh_true[] = "true", tmp[] = "/tmp";

static int wait_exit_status(pid_t pid) {
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static int fake_no_birth_cgroup(const PayloadContainment *c) {
        return -EBADF;
}

/* A "cgroup" that is a plain directory: clone3 refuses a birth there. */
static int fake_birth_in_a_directory(const PayloadContainment *c) {
        return c->payload_fd;
}

static void assert_enter_reported(const PayloadContainmentOps *ops, int payload_fd) {
        PayloadContainment c = { .ops = ops, .payload_fd = payload_fd };
        JobSpec spec = { .command = sh_true, .cwd = tmp };
        pid_t pid;
        _cleanup_close_ int report_fd = -EBADF;
        const char *step = NULL;
        cr_assert_eq(exec_child_fork(&(ExecChild) { .spec = &spec, .containment = &c, .output_fd = -EBADF },
                                     &pid, &report_fd, &step), 0);
        ExecFailure f = {};
        cr_assert_eq(exec_child_wait(report_fd, &f), 1);
        cr_assert_eq(f.error, -EIO);
        cr_assert_str_eq(f.step, "enter the fake containment");
        cr_assert_eq(wait_exit_status(pid), 127);
}

Test(supervisor_exec_child, the_containment_is_entered_first_and_its_failure_reported) {
        const PayloadContainmentOps fake = {
                .name = "fake", .birth_cgroup = fake_no_birth_cgroup, .enter = fake_enter_failing };
        assert_enter_reported(&fake, -EBADF);
}

/* Where the birth in its cgroup is refused, the child is moved in by
 * enter() as before, and that step's failure is what is reported. */
Test(supervisor_exec_child, a_refused_birth_in_a_cgroup_falls_back_to_enter) {
        const PayloadContainmentOps fake = {
                .name = "fake", .birth_cgroup = fake_birth_in_a_directory, .enter = fake_enter_failing };
        _cleanup_close_ int not_a_cgroup = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(not_a_cgroup, 0);
        assert_enter_reported(&fake, not_a_cgroup);
}

/* As root: the command runs as spec.uid with no capabilities, in spec.cwd,
 * with the given environment, its output in output_fd, leading a session. */

static char dir[] = "/tmp/bgrun-test-exec-child.XXXXXX";
static int dir_fd = -EBADF;

static void setup(void) {
        if (geteuid() != 0)
                cr_skip_test("dropping privileges needs root");
        cr_assert_not_null(mkdtemp(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static void teardown(void) {
        if (dir_fd >= 0) {
                safe_close(dir_fd);
                rm_rf_at(AT_FDCWD, dir);
        }
}

TestSuite(supervisor_exec_child_root, .init = setup, .fini = teardown);

static pid_t run(JobSpec *spec, char **env, int *ret_report_fd) {
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_PROCESS_GROUP), 0);
        _cleanup_close_ int out = openat(dir_fd, "output", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        cr_assert_geq(out, 0);
        pid_t pid;
        const char *step = NULL;
        _cleanup_(sandbox_plan_done) SandboxPlan plan = {};
        _cleanup_free_ char *why = NULL;
        if (sandbox_requested(spec))
                cr_assert_eq(sandbox_plan_build(spec, NULL, &plan, &why), 0, "%s", why);
        cr_assert_eq(exec_child_fork(&(ExecChild) { .spec = spec, .containment = &c, .output_fd = out, .env = env,
                                                    .sandbox = plan.mounts ? &plan : NULL },
                                     &pid, ret_report_fd, &step), 0);
        return pid;
}

Test(supervisor_exec_child_root, the_command_runs_as_told) {
        char cmd[] = "echo \"$FOO $PWD $(id -u) $(cut -d' ' -f6 /proc/$$/stat) $$\"; "
                     "grep -q '^CapEff:.0000000000000000$' /proc/self/status && exit 3";
        char foo[] = "FOO=bar";
        char *env[] = { foo, NULL };
        gid_t groups[] = { 0 };
        JobSpec spec = { .command = cmd, .cwd = tmp, .uid = 0, .gid = 0, .groups = groups, .n_groups = 1 };
        _cleanup_close_ int report_fd = -EBADF;
        pid_t pid = run(&spec, env, &report_fd);
        ExecFailure f = {};
        cr_assert_eq(exec_child_wait(report_fd, &f), 0, "failed to %s: %s", f.step, strerror(-f.error));
        cr_assert_eq(wait_exit_status(pid), 3, "the command ran with capabilities");

        _cleanup_free_ char *out = NULL;
        size_t len;
        cr_assert_eq(read_file_at(dir_fd, "output", 4096, &out, &len), 0);
        _cleanup_free_ char *expect = NULL;
        cr_assert_geq(asprintf(&expect, "bar /tmp 0 %d %d\n", (int) pid, (int) pid), 0);
        cr_assert_str_eq(out, expect);
}

Test(supervisor_exec_child_root, a_missing_directory_is_reported_by_step) {
        char nowhere[] = "/nonexistent/bgrun-test";
        gid_t groups[] = { 0 };
        JobSpec spec = { .command = sh_true, .cwd = nowhere, .uid = 0, .gid = 0, .groups = groups, .n_groups = 1 };
        char *env[] = { NULL };
        _cleanup_close_ int report_fd = -EBADF;
        pid_t pid = run(&spec, env, &report_fd);
        ExecFailure f = {};
        cr_assert_eq(exec_child_wait(report_fd, &f), 1);
        cr_assert_eq(f.error, -ENOENT);
        cr_assert_str_eq(f.step, "change to the working directory");
        cr_assert_eq(wait_exit_status(pid), 127);
}

/* Argv: the program found in the job's own PATH, its words exactly; one
 * not found is refused as the caller's input. */
Test(supervisor_exec_child_root, argv_runs_from_the_jobs_path_exactly) {
        cr_assert_eq(write_file_atomic_at(dir_fd, "tool", "#!/bin/sh\nprintf '%s|' \"$@\"\n", 28, 0755, 0), 0);
        char path_var[128];
        snprintf(path_var, sizeof path_var, "PATH=/nonexistent:%s", dir);
        char *env[] = { path_var, NULL };
        char *words[] = { "tool", "a b", "$HOME", "*", "", NULL };
        gid_t groups[] = { 0 };
        JobSpec spec = { .command = sh_true, .cwd = tmp, .argv = words, .uid = 0, .gid = 0, .groups = groups,
                         .n_groups = 1 };
        _cleanup_close_ int report_fd = -EBADF;
        pid_t pid = run(&spec, env, &report_fd);
        ExecFailure f = {};
        cr_assert_eq(exec_child_wait(report_fd, &f), 0, "failed to %s: %s", f.step, strerror(-f.error));
        cr_assert_eq(wait_exit_status(pid), 0);
        _cleanup_free_ char *out = NULL;
        size_t len;
        cr_assert_eq(read_file_at(dir_fd, "output", 4096, &out, &len), 0);
        cr_assert_str_eq(out, "a b|$HOME|*||");

        char *missing[] = { "bgrun-no-such-program", NULL };
        spec.argv = missing;
        safe_close(report_fd);
        pid = run(&spec, env, &report_fd);
        cr_assert_eq(exec_child_wait(report_fd, &f), 1);
        cr_assert_eq(f.refused, EXEC_REFUSED_PROGRAM);
        cr_assert_eq(f.error, -ENOENT);
        cr_assert_eq(wait_exit_status(pid), 127);
}

/* LaunchDeadlineUSec is looked at last, just before the exec: past it,
 * nothing runs and the refusal says so. */
Test(supervisor_exec_child_root, a_passed_deadline_runs_nothing) {
        char cmd[] = "echo ran";
        gid_t groups[] = { 0 };
        char *env[] = { NULL };
        JobSpec spec = { .command = cmd, .cwd = tmp, .uid = 0, .gid = 0, .groups = groups, .n_groups = 1,
                         .launch_deadline_usec = 1 };
        _cleanup_close_ int report_fd = -EBADF;
        pid_t pid = run(&spec, env, &report_fd);
        ExecFailure f = {};
        cr_assert_eq(exec_child_wait(report_fd, &f), 1);
        cr_assert_eq(f.refused, EXEC_REFUSED_DEADLINE);
        cr_assert_eq(f.error, -ETIME);
        cr_assert_eq(wait_exit_status(pid), 127);
        _cleanup_free_ char *out = NULL;
        size_t len;
        int r = read_file_at(dir_fd, "output", 4096, &out, &len);
        cr_assert(r == -ENOENT || (r == 0 && len == 0), "the command ran: %s", out);
}

/* Run spec's command in its sandbox (a test of the sandbox skips where no
 * namespace may be made) and return what it wrote. */
static char *run_sandboxed(JobSpec *spec) {
        char path_var[] = "PATH=/usr/bin:/bin";
        char *env[] = { path_var, NULL };
        gid_t groups[] = { 0 };
        spec->cwd = tmp;
        spec->groups = groups;
        spec->n_groups = 1;
        _cleanup_close_ int report_fd = -EBADF;
        pid_t pid = run(spec, env, &report_fd);
        ExecFailure f = {};
        int r = exec_child_wait(report_fd, &f);
        if (r > 0 && f.refused == EXEC_REFUSED_SANDBOX) {
                (void) wait_exit_status(pid);
                cr_skip_test("no namespace may be made here: %s", strerror(-f.error));
        }
        cr_assert_eq(r, 0, "failed to %s: %s", f.step, strerror(-f.error));
        cr_assert_eq(wait_exit_status(pid), 0);
        char *out = NULL;
        size_t len;
        cr_assert_eq(read_file_at(dir_fd, "output", 4096, &out, &len), 0);
        return out;
}

/* PrivateNetwork: the command's network is its own, its loopback up. */
Test(supervisor_exec_child_root, private_network_leaves_only_loopback) {
        char cmd[] = "tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' '; "
                     "grep -q '^CapBnd:.0000000000000000$' /proc/self/status || echo capabilities";
        JobSpec spec = { .command = cmd, .private_network = true };
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "lo\n");
}

/* PrivateTmp: /tmp, /var/tmp and /dev/shm of the command's own, empty, and
 * what it writes there never reaches ours. */
Test(supervisor_exec_child_root, private_tmp_is_the_commands_own) {
        char cmd[] = "for d in /tmp /var/tmp /dev/shm; do [ -d $d ] || continue; [ -z \"$(ls -A $d)\" ] || echo \"$d not empty\"; "
                     "echo x > $d/bgrun-test-private-tmp; done; echo done";
        JobSpec spec = { .command = cmd, .private_tmp = true };
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "done\n");
        cr_assert_eq(access("/tmp/bgrun-test-private-tmp", F_OK), -1, "the command's /tmp is ours");
        cr_assert_eq(access("/dev/shm/bgrun-test-private-tmp", F_OK), -1, "the command's /dev/shm is ours");
}

/* ProtectSystem=strict with ReadWritePaths: the command writes there and
 * nowhere else, though as root it owns the rest; read-only is a mount's, so
 * chmod is stopped too, and the API file systems stay as they were. */
Test(supervisor_exec_child_root, protect_system_strict_writes_only_read_write_paths) {
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "echo x > %s/written || echo 'not written'; "
                 "touch /etc/bgrun-test-strict 2>/dev/null && echo '/etc written'; "
                 "touch /run/bgrun-test-strict 2>/dev/null && echo '/run written'; "
                 "chmod u+w /usr/bin 2>/dev/null && echo 'chmod /usr/bin'; "
                 "[ -w /dev/null ] || echo '/dev/null read-only'; echo done", dir);
        char *rw[] = { dir, NULL };
        JobSpec spec = { .command = cmd, .protect_system = PROTECT_SYSTEM_STRICT, .read_write_paths = rw };
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "done\n");
        cr_assert_eq(faccessat(dir_fd, "written", F_OK, 0), 0);
        cr_assert_eq(access("/etc/bgrun-test-strict", F_OK), -1);
}

/* InaccessiblePaths hides a file under a writable parent: it can be neither
 * read nor removed; a read-only path under a writable one stays so. */
Test(supervisor_exec_child_root, inaccessible_and_read_only_paths_under_a_writable_one) {
        cr_assert_eq(write_file_atomic_at(dir_fd, "secret", "s3cret\n", 7, 0644, 0), 0);
        cr_assert_eq(mkdirat(dir_fd, "ro", 0755), 0);
        char secret[128], ro[128], cmd[512];
        snprintf(secret, sizeof secret, "%s/secret", dir);
        snprintf(ro, sizeof ro, "-%s/ro/", dir);
        snprintf(cmd, sizeof cmd,
                 "cat %s/secret 2>/dev/null; rm -f %s/secret 2>/dev/null && echo removed; "
                 "touch %s/ro/x 2>/dev/null && echo 'ro written'; echo y > %s/y; echo done", dir, dir, dir, dir);
        char *hidden[] = { secret, NULL }, *read_only[] = { ro, NULL }, *rw[] = { dir, NULL };
        JobSpec spec = { .command = cmd, .protect_system = PROTECT_SYSTEM_STRICT, .read_write_paths = rw,
                         .inaccessible_paths = hidden, .read_only_paths = read_only };
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "done\n");
        cr_assert_eq(faccessat(dir_fd, "secret", F_OK, 0), 0);
        cr_assert_eq(faccessat(dir_fd, "y", F_OK, 0), 0);
}

/* Every sandbox keeps the kernel's settings read-only: root's command,
 * which may write root's files with no capability, sets no core_pattern
 * and nothing in /sys (access(W_OK) says EROFS: nothing is written). */
Test(supervisor_exec_child_root, the_kernels_settings_are_read_only) {
        if (access("/proc/sys/kernel/core_pattern", W_OK) < 0 || access("/sys/class/net/lo/mtu", W_OK) < 0)
                cr_skip_test("/proc/sys or /sys is read-only here already");
        char cmd[] = "for f in /proc/sys/kernel/core_pattern /sys/class/net/lo/mtu; do [ -w $f ] && echo \"$f writable\"; done; "
                     "echo done";
        JobSpec spec = { .command = cmd, .private_tmp = true };
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "done\n");
}

/* ProtectHome=yes: /root shows nothing (and cannot be entered). */
Test(supervisor_exec_child_root, protect_home_yes_hides_root) {
        char cmd[] = "ls -A /root 2>/dev/null; [ -r /root ] && echo readable; echo done";
        JobSpec spec = { .command = cmd, .protect_home = PROTECT_HOME_YES };
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "done\n");
}

/* A path that is not there: refused by which option and which path, with
 * nothing run; optional ('-'), the command runs. */
Test(supervisor_exec_child_root, a_missing_path_is_refused_unless_optional) {
        char missing[] = "/nonexistent/bgrun-test", optional[] = "-/nonexistent/bgrun-test", cmd[] = "echo ran";
        char *paths[] = { tmp, missing, NULL };
        JobSpec spec = { .command = cmd, .cwd = tmp, .read_only_paths = paths, .uid = 0, .gid = 0,
                         .groups = (gid_t[]) { 0 }, .n_groups = 1 };
        char *env[] = { NULL };
        _cleanup_close_ int report_fd = -EBADF;
        pid_t pid = run(&spec, env, &report_fd);
        ExecFailure f = {};
        cr_assert_eq(exec_child_wait(report_fd, &f), 1);
        cr_assert_eq(f.refused, EXEC_REFUSED_PATH, "%s: %s", f.step, strerror(-f.error));
        cr_assert_eq(f.option, LAUNCH_OPTION_READ_ONLY_PATHS);
        cr_assert_eq(f.entry, 1);
        cr_assert_eq(wait_exit_status(pid), 127);

        paths[1] = optional;
        _cleanup_free_ char *out = run_sandboxed(&spec);
        cr_assert_str_eq(out, "ran\n");
}
