/* SPDX-License-Identifier: MIT */
/* The file-system sandbox's plan: the order, who wins at a path, what each
 * mount must do given its parents, and what cannot be had together. */
#include <criterion/criterion.h>

#include "macro.h"
#include "sandbox-plan.h"

static SandboxPlan plan;
static char *message;

static void teardown(void) {
        sandbox_plan_done(&plan);
        free(message);
        message = NULL;
}

TestSuite(sandbox_plan, .fini = teardown);

static void build_ok(const JobSpec *s) {
        cr_assert_eq(sandbox_plan_build(s, NULL, &plan, &message), 0, "%s", message);
}

/* s's plan is refused (-EINVAL), with exactly that message. */
static void build_refused(const JobSpec *s, const char *expected) {
        sandbox_plan_done(&plan);
        cr_assert_eq(sandbox_plan_build(s, NULL, &plan, &message), -EINVAL);
        cr_assert_str_eq(message, expected);
        free(message);
        message = NULL;
}

static const SandboxMount *at(const char *path) {
        for (size_t i = 0; i < plan.n_mounts; i++)
                if (streq(plan.mounts[i].path, path))
                        return &plan.mounts[i];
        cr_assert_fail("%s is not in the plan", path);
        return NULL;
}

/* The plan's mounts but the sandbox's own (its exits), in order. */
static size_t asked(const SandboxMount **ret, size_t max) {
        size_t n = 0;
        for (size_t i = 0; i < plan.n_mounts; i++)
                if (!plan.mounts[i].exit && n < max)
                        ret[n++] = &plan.mounts[i];
        return n;
}

Test(sandbox_plan, any_sandbox_option_sandboxes) {
        JobSpec s = {};
        cr_assert(!sandbox_requested(&s));
        cr_assert_eq(sandbox_first_option(&s), _LAUNCH_OPTION_MAX);
        build_ok(&s);
        cr_assert_eq(plan.n_mounts, 0, "no sandbox, no exits");
        s.private_tmp = true;
        cr_assert(sandbox_requested(&s));
        cr_assert_eq(sandbox_first_option(&s), LAUNCH_OPTION_PRIVATE_TMP);
}

/* A sandboxed job's ways out are closed whatever it asked: the sockets that
 * start work elsewhere hidden, the job store too, the cgroup tree
 * read-only; no path option opens them again, and a path inside one is
 * looked up (and not found) rather than refused here. */
Test(sandbox_plan, the_exits_are_closed) {
        char *rw[] = { "/run/dbus/system_bus_socket", "/run", NULL }, *ro[] = { "/var/lib/bgrun/x", NULL };
        JobSpec s = { .uid = 1000, .private_network = true, .read_write_paths = rw, .read_only_paths = ro };
        cr_assert_eq(sandbox_plan_build(&s, "/var/lib/bgrun/", &plan, &message), 0, "%s", message);
        static const struct { const char *path; SandboxMode mode; } exits[] = {
                { "/run/dbus/system_bus_socket", SANDBOX_INACCESSIBLE }, { "/run/systemd/private", SANDBOX_INACCESSIBLE },
                { "/run/bgrun", SANDBOX_INACCESSIBLE }, { "/run/user/1000", SANDBOX_TMPFS },
                { "/var/lib/bgrun", SANDBOX_INACCESSIBLE }, { "/dev", SANDBOX_DEV },
                { "/sys", SANDBOX_READ_ONLY }, { "/proc/sys", SANDBOX_READ_ONLY },
                { "/proc/sysrq-trigger", SANDBOX_READ_ONLY },
        };
        for (size_t i = 0; i < ELEMENTSOF(exits); i++) {
                const SandboxMount *m = at(exits[i].path);
                cr_assert(m->exit && m->optional && m->apply, "%s", exits[i].path);
                cr_assert_eq(m->mode, exits[i].mode, "%s", exits[i].path);
                cr_assert_eq(m->option, LAUNCH_OPTION_PRIVATE_NETWORK, "an exit's refusal names the first option");
        }
        const SandboxMount *inside = at("/var/lib/bgrun/x");
        cr_assert(!inside->exit && inside->apply && !inside->optional);
        cr_assert(at("/run")->apply, "a writable path is a mount of its own, even without a read-only parent");
}

/* strict: / read-only, the API file systems as the host has them, each
 * path a parent's child after it; paths normalized. */
Test(sandbox_plan, strict_with_read_write_paths) {
        char *rw[] = { "/src//", "-/var/cache", NULL }, *ro[] = { "/src/.git", NULL };
        JobSpec s = { .protect_system = PROTECT_SYSTEM_STRICT, .read_write_paths = rw, .read_only_paths = ro };
        build_ok(&s);
        /* /sys is an exit, read-only in every sandbox, which wins over the
         * API file systems' read-write. */
        const char *order[] = { "/", "/proc", "/src", "/src/.git", "/var/cache" };
        const SandboxMount *m[16];
        cr_assert_eq(asked(m, 16), ELEMENTSOF(order));
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                cr_assert_str_eq(m[i]->path, order[i]);
        for (size_t i = 1; i < plan.n_mounts; i++)
                cr_assert_lt(strcmp(plan.mounts[i - 1].path, plan.mounts[i].path), 0, "sorted, exits too");
        cr_assert(at("/")->apply && at("/")->mode == SANDBOX_READ_ONLY);
        cr_assert(at("/proc")->apply && at("/proc")->mode == SANDBOX_READ_WRITE && at("/proc")->optional);
        cr_assert(at("/src")->apply && !at("/src")->optional);
        cr_assert_eq(at("/src")->option, LAUNCH_OPTION_READ_WRITE_PATHS);
        cr_assert_eq(at("/var/cache")->entry, 1);
        cr_assert(at("/var/cache")->optional);
        cr_assert(at("/src/.git")->apply && at("/src/.git")->mode == SANDBOX_READ_ONLY);
        cr_assert(at("/sys")->exit && at("/sys")->mode == SANDBOX_READ_ONLY && !at("/sys")->apply,
                  "read-only with / already (and not given back read-write as an API file system)");
}

/* A parent that made it so already leaves a read-only path below a
 * read-only one only looked up; a writable path is a mount of its own
 * always (its sockets are told by their mount), below a writable parent
 * too. */
Test(sandbox_plan, what_a_parent_did_is_not_done_again) {
        char *rw[] = { "/a", "/a/b", NULL }, *ro[] = { "/usr/lib", NULL };
        JobSpec s = { .protect_system = PROTECT_SYSTEM_YES, .read_write_paths = rw, .read_only_paths = ro };
        build_ok(&s);
        cr_assert(at("/a")->apply);
        cr_assert(at("/a/b")->apply);
        cr_assert(at("/usr")->apply);
        cr_assert(!at("/usr/lib")->apply);
}

/* Every sandbox has a /dev of its own; a device a path option names below
 * it is bound in with it (in_dev, nothing to apply on its own), an
 * inaccessible one is simply not there, and a path below such a device
 * follows the usual rules. */
Test(sandbox_plan, devices_below_the_jobs_own_dev) {
        char *rw[] = { "/dev/kvm", "/dev/dri", NULL }, *ro[] = { "/dev/dri/card0", "-/dev/nvidia0", NULL },
             *hidden[] = { "/dev/sda", "/dev/dri/card1", NULL };
        JobSpec s = { .protect_system = PROTECT_SYSTEM_STRICT, .read_write_paths = rw, .read_only_paths = ro,
                      .inaccessible_paths = hidden };
        build_ok(&s);
        const SandboxMount *dev = at("/dev");
        cr_assert(dev->exit && dev->apply && dev->mode == SANDBOX_DEV);
        cr_assert(at("/dev/kvm")->in_dev && !at("/dev/kvm")->apply && at("/dev/kvm")->mode == SANDBOX_READ_WRITE);
        cr_assert(at("/dev/dri")->in_dev && !at("/dev/dri")->apply);
        cr_assert(at("/dev/nvidia0")->in_dev && at("/dev/nvidia0")->optional && at("/dev/nvidia0")->mode == SANDBOX_READ_ONLY);
        for (size_t i = 0; i < plan.n_mounts; i++)
                cr_assert(!streq(plan.mounts[i].path, "/dev/sda"), "an inaccessible device is not bound at all");
        cr_assert(!at("/dev/dri/card0")->in_dev && at("/dev/dri/card0")->apply, "below a device: made read-only on its own");
        cr_assert(at("/dev/dri/card1")->mode == SANDBOX_INACCESSIBLE && at("/dev/dri/card1")->apply);
        /* Bound in with /dev: they follow it at once, so its mount finds them. */
        size_t i = (size_t) (dev - plan.mounts);
        cr_assert(plan.mounts[i + 1].in_dev);
}

/* At one path: inaccessible beats read-only beats read-write, and any path
 * option beats what ProtectSystem implies (ReadWritePaths=/etc keeps /etc
 * writable under full, as in systemd). */
Test(sandbox_plan, the_winner_at_one_path) {
        char *rw[] = { "/etc", "/x", "/y", NULL }, *ro[] = { "/x", "/z", NULL }, *hidden[] = { "/y", "/z", NULL };
        JobSpec s = { .protect_system = PROTECT_SYSTEM_FULL, .read_write_paths = rw, .read_only_paths = ro,
                      .inaccessible_paths = hidden };
        build_ok(&s);
        cr_assert_eq(at("/etc")->mode, SANDBOX_READ_WRITE);
        cr_assert_eq(at("/etc")->option, LAUNCH_OPTION_READ_WRITE_PATHS);
        cr_assert_eq(at("/x")->mode, SANDBOX_READ_ONLY);
        cr_assert_eq(at("/y")->mode, SANDBOX_INACCESSIBLE);
        cr_assert_eq(at("/z")->mode, SANDBOX_INACCESSIBLE);
        size_t n = 0;
        for (size_t i = 0; i < plan.n_mounts; i++)
                n += streq(plan.mounts[i].path, "/x");
        cr_assert_eq(n, 1, "one mount a path");
}

/* '/' sorts before any other byte: a parent's children follow it at once. */
Test(sandbox_plan, children_follow_their_parent) {
        char *ro[] = { "/a-b", "/a/b", "/a", "/a.b", NULL };
        JobSpec s = { .read_only_paths = ro };
        build_ok(&s);
        const char *order[] = { "/a", "/a/b", "/a-b", "/a.b" };
        const SandboxMount *m[16];
        cr_assert_eq(asked(m, 16), ELEMENTSOF(order));
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                cr_assert_str_eq(m[i]->path, order[i]);
        cr_assert(!at("/a/b")->apply);
        cr_assert(at("/a-b")->apply, "not below /a");
}

/* Nothing beneath an inaccessible or tmpfs path can be reached: a path
 * there is refused naming both, unless it hides too or is optional. */
Test(sandbox_plan, nothing_beneath_what_is_hidden) {
        char *rw[] = { "/home/alice/src", NULL };
        JobSpec s = { .protect_home = PROTECT_HOME_YES, .read_write_paths = rw };
        build_refused(&s, "ReadWritePaths=/home/alice/src lies inside what ProtectHome=yes hides: "
                          "nothing beneath it can be reached");

        char *optional[] = { "-/home/alice/src", NULL }, *hidden[] = { "/home/bob", NULL };
        s = (JobSpec) { .protect_home = PROTECT_HOME_TMPFS, .read_only_paths = optional, .inaccessible_paths = hidden };
        build_ok(&s);
        const SandboxMount *m[16];
        cr_assert_eq(asked(m, 16), 3, "/home, /root, /run/user only");
        cr_assert_eq(at("/home")->mode, SANDBOX_TMPFS);

        char *inner[] = { "/data/x", NULL }, *outer[] = { "/data", NULL };
        s = (JobSpec) { .read_only_paths = inner, .inaccessible_paths = outer };
        build_refused(&s, "ReadOnlyPaths=/data/x lies inside what InaccessiblePaths=/data hides: "
                          "nothing beneath it can be reached");
}

/* /sys (the cgroup tree, the kernel's settings) stays read-only in every
 * sandbox: a writable path inside it is refused by its words (a read-only
 * one is merely redundant). */
Test(sandbox_plan, no_path_option_makes_the_cgroup_tree_writable) {
        char *rw[] = { "-/sys/fs/cgroup/user.slice", NULL };
        JobSpec s = { .private_tmp = true, .read_write_paths = rw };
        build_refused(&s, "ReadWritePaths=-/sys/fs/cgroup/user.slice lies inside /sys, which every sandbox keeps read-only");
        char *ro[] = { "/sys/fs/cgroup/user.slice", NULL };
        s = (JobSpec) { .private_tmp = true, .read_only_paths = ro };
        build_ok(&s);
        cr_assert(!at("/sys/fs/cgroup/user.slice")->apply, "read-only already");
}
