/* SPDX-License-Identifier: MIT */
/* The supervisor's containment operations: which mechanism gets which, and
 * what each kind does where that needs no root and no cgroupfs. */
#include <assert.h>
#include <criterion/criterion.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "fileio.h"
#include "grant.h"
#include "macro.h"
#include "payload-containment.h"
#include "process-tree.h"
#include "subreaper.h"

Test(supervisor_containment, each_mechanism_gets_its_kind) {
        cr_assert_eq(payload_containment_ops(MECHANISM_SYSTEMD), &payload_cgroup_ops);
        cr_assert_eq(payload_containment_ops(MECHANISM_PROCESS_GROUP), &payload_process_tree_ops);
}

Test(supervisor_containment, every_mechanism_that_contains_gets_the_cgroup_kind) {
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++) {
                const PayloadContainmentOps *ops = payload_containment_ops(m);
                cr_assert_not_null(ops, "no operations for %s", mechanism_to_string(m));
                cr_assert_eq(ops == &payload_cgroup_ops, mechanism_contains(m),
                             "%s gets %s", mechanism_to_string(m), ops->name);
        }
}

Test(supervisor_containment, an_unknown_mechanism_gets_none) {
        cr_assert_null(payload_containment_ops(_MECHANISM_MAX));
        cr_assert_null(payload_containment_ops((Mechanism) -1));
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, _MECHANISM_MAX), -EINVAL);
        cr_assert_null(c.ops);
}

/* Every operation of PayloadContainmentOps, in the order the struct declares
 * them: supervise.c calls each without asking whether it is there. */
typedef void (*AnyOp)(void);
#define OP(name) { #name, offsetof(PayloadContainmentOps, name) }
static const struct {
        const char *name;
        size_t offset;
} every_op[] = {
        OP(setup), OP(birth_cgroup), OP(enter), OP(kill), OP(signal), OP(is_empty), OP(watch),
        OP(confirm_empty), OP(usage), OP(controllers), OP(cleanup), OP(adopt), OP(cgroup),
};
#undef OP
/* The struct is name, teardown_method, then operations only, as many as
 * every_op lists: an operation added to it (or any other member) stops this
 * file from compiling until every_op, and so this test, has it. */
static_assert(offsetof(PayloadContainmentOps, name) == 0, "PayloadContainmentOps starts with name");
static_assert(offsetof(PayloadContainmentOps, teardown_method) == sizeof(const char *),
              "PayloadContainmentOps: teardown_method follows name");
static_assert(offsetof(PayloadContainmentOps, setup) ==
                      (offsetof(PayloadContainmentOps, teardown_method) + sizeof(TeardownMethod) + sizeof(AnyOp) - 1) /
                              sizeof(AnyOp) * sizeof(AnyOp),
              "PayloadContainmentOps: the operations follow teardown_method");
static_assert(sizeof(PayloadContainmentOps) == offsetof(PayloadContainmentOps, setup) + ELEMENTSOF(every_op) * sizeof(AnyOp),
              "PayloadContainmentOps has an operation that every_op does not list");

static void assert_complete(const PayloadContainmentOps *ops, TeardownMethod method) {
        cr_assert_not_null(ops->name);
        cr_assert_eq(ops->teardown_method, method, "%s", ops->name);
        for (size_t i = 0; i < ELEMENTSOF(every_op); i++) {
                /* Listed in the struct's order, so the list covers every slot. */
                cr_assert_eq(every_op[i].offset, offsetof(PayloadContainmentOps, setup) + i * sizeof(AnyOp),
                             "every_op[%zu] (%s) is out of the struct's order", i, every_op[i].name);
                AnyOp op;
                memcpy(&op, (const char *) ops + every_op[i].offset, sizeof(op));
                cr_assert_not_null(op, "%s lacks the operation %s", ops->name, every_op[i].name);
        }
}

Test(supervisor_containment, both_kinds_are_complete_and_name_their_teardown) {
        assert_complete(&payload_cgroup_ops, TEARDOWN_CGROUP_KILL);
        assert_complete(&payload_process_tree_ops, TEARDOWN_PROCESS_TREE);
}

Test(supervisor_containment, init_and_done) {
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_SYSTEMD), 0);
        cr_assert_eq(c.ops, &payload_cgroup_ops);
        cr_assert_eq(c.payload_fd, -EBADF);
        c.payload = strdup("/x/payload");
        c.payload_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_eq(c.ops->birth_cgroup(&c), c.payload_fd, "the command is born in the payload's cgroup");
        payload_containment_done(&c);
        cr_assert_null(c.payload);
        cr_assert_eq(c.payload_fd, -EBADF);
}

/* The process tree: no cgroup, and the kill reaches what left the session. */

Test(supervisor_containment, a_process_tree_has_no_cgroup_and_nothing_to_set_up) {
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_PROCESS_GROUP), 0);
        const char *step = NULL;
        cr_assert_eq(c.ops->setup(&c, -EBADF, &step), 0);
        cr_assert_lt(c.ops->birth_cgroup(&c), 0, "a plain fork: no cgroup to be born in");
        cr_assert_eq(c.ops->enter(&c, &step), 0);
        cr_assert_null(c.ops->cgroup(&c));
        payload_containment_done(&c);
}

/* A leader whose child double-forked out of its session: an orphan below
 * us, the subreaper. Each process ends itself should a kill under test not
 * reach it. */
static void spawn_tree(pid_t *ret_leader, pid_t *ret_orphan) {
        cr_assert_eq(subreaper_enable(), 0);
        int ready[2];
        cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
        pid_t leader = fork();
        cr_assert_geq(leader, 0);
        if (leader == 0) {
                alarm(30);
                if (fork() == 0) {
                        setsid();
                        if (fork() == 0) {
                                alarm(30);
                                pid_t self = getpid();
                                (void) !write(ready[1], &self, sizeof self);
                                pause();
                        }
                        _exit(0);
                }
                pause();
                _exit(0);
        }
        safe_close(ready[1]);
        cr_assert_eq(read(ready[0], ret_orphan, sizeof *ret_orphan), (ssize_t) sizeof *ret_orphan);
        safe_close(ready[0]);
        *ret_leader = leader;
}

static bool exits_within(const PidRef *ref, int timeout_ms) {
        struct pollfd p = { .fd = ref->fd, .events = POLLIN };
        return poll(&p, 1, timeout_ms) == 1;
}

static void assert_no_children(void) {
        /* Nothing left: not even a zombie to reap. */
        cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1);
        cr_assert_eq(errno, ECHILD);
}

Test(supervisor_containment, a_process_tree_kill_reaches_setsid_orphans, .timeout = 20) {
        pid_t leader, orphan;
        spawn_tree(&leader, &orphan);
        PidRef l = PIDREF_NULL, o = PIDREF_NULL;
        cr_assert_eq(pidref_set_pid(&l, leader), 0);
        cr_assert_eq(pidref_set_pid(&o, orphan), 0);
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_PROCESS_GROUP), 0);

        c.ops->kill(&c, &l);
        cr_assert(exits_within(&l, 5000), "the leader survived the kill");
        cr_assert(exits_within(&o, 5000), "the orphan outside the session survived the kill");
        siginfo_t si = {};
        cr_assert_eq(waitid(P_PIDFD, (id_t) l.fd, &si, WEXITED), 0);
        cr_assert_eq(si.si_code, CLD_KILLED);
        cr_assert_eq(si.si_status, SIGKILL);

        cr_assert_eq(c.ops->confirm_empty(&c), 0);
        assert_no_children();
        pidref_done(&l);
        pidref_done(&o);
        payload_containment_done(&c);
}

Test(supervisor_containment, a_process_tree_confirm_kills_and_reaps_what_is_left, .timeout = 20) {
        pid_t leader, orphan;
        spawn_tree(&leader, &orphan);
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_PROCESS_GROUP), 0);
        cr_assert_eq(c.ops->confirm_empty(&c), 0);
        assert_no_children();
        payload_containment_done(&c);
}

/* The cgroup kind on a plain directory with a cgroup's file names. */

static char dir[] = "/tmp/bgrun-test-containment.XXXXXX";
static int dir_fd = -EBADF;

static void put(const char *name, const char *content) {
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

static void assert_killed(void) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        cr_assert_eq(read_file_at(dir_fd, "cgroup.kill", 16, &buf, &len), 0);
        cr_assert_str_eq(buf, "1");
}

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static void teardown(void) {
        safe_close(dir_fd);
        rm_rf_at(AT_FDCWD, dir);
}

TestSuite(supervisor_cgroup, .init = setup, .fini = teardown);

Test(supervisor_cgroup, kill_and_confirm_go_through_the_payload_cgroup) {
        put("cgroup.kill", "");
        put("cgroup.procs", "");
        put("cgroup.events", "populated 0\n");
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_SYSTEMD), 0);
        c.payload = strdup("/job/payload");
        c.payload_fd = dir_fd;

        PidRef none = PIDREF_NULL;
        c.ops->kill(&c, &none);
        assert_killed();

        /* confirm_empty kills again before it waits. */
        put("cgroup.kill", "");
        cr_assert_eq(c.ops->confirm_empty(&c), 0);
        assert_killed();
        cr_assert_str_eq(c.ops->cgroup(&c), "/job/payload");

        c.payload_fd = -EBADF; /* the suite's */
        payload_containment_done(&c);
}

static void setup_with_grant(const char *grant_cgroup, int expect, const char *expect_step) {
        if (grant_cgroup)
                cr_assert_eq(grant_open(dir_fd, MECHANISM_SYSTEMD, "u.scope", grant_cgroup, 1000), 0);
        PayloadContainment c = PAYLOAD_CONTAINMENT_NULL;
        cr_assert_eq(payload_containment_init(&c, MECHANISM_SYSTEMD), 0);
        const char *step = NULL;
        int r = c.ops->setup(&c, dir_fd, &step);
        cr_assert_eq(r, expect, "setup: %s", strerror(-r));
        cr_assert_str_eq(step, expect_step);
        /* Refused before anything was made or moved. */
        cr_assert_eq(c.payload_fd, -EBADF);
        cr_assert_null(c.payload);
        payload_containment_done(&c);
}

Test(supervisor_cgroup, setup_refuses_a_cgroup_the_grant_does_not_name) {
        _cleanup_free_ char *self = NULL;
        if (cgroup_path_of_pid(0, &self) < 0)
                cr_skip_test("no cgroup v2 path for this process");
        _cleanup_free_ char *other = NULL;
        cr_assert_geq(asprintf(&other, "%s/elsewhere", streq(self, "/") ? "" : self), 0);
        setup_with_grant(other, -EPERM, "set up the job's cgroup: the supervisor is not in the job's scope");
}

Test(supervisor_cgroup, setup_refuses_a_grant_without_a_cgroup) {
        _cleanup_free_ char *self = NULL;
        if (cgroup_path_of_pid(0, &self) < 0)
                cr_skip_test("no cgroup v2 path for this process");
        setup_with_grant("", -EPERM, "set up the job's cgroup: the supervisor is not in the job's scope");
}

Test(supervisor_cgroup, setup_needs_a_grant) {
        _cleanup_free_ char *self = NULL;
        if (cgroup_path_of_pid(0, &self) < 0)
                cr_skip_test("no cgroup v2 path for this process");
        setup_with_grant(NULL, -ENOENT, "set up the job's cgroup");
}
