/* SPDX-License-Identifier: MIT */
/* The sandbox in the command's own process: namespaces and mounts, as
 * systemd's namespace.c makes them for a service, here for a process that
 * systemd did not start. System calls only, on the stack (sandbox-apply.h).
 *
 * Why mounts: a read-only mount stops every write under it, chmod, chown,
 * xattrs and utimes included, for every process of the job however it
 * got there; Landlock alone lets those through. Why the new mount API
 * (open_tree, move_mount, mount_setattr, fsmount): each call works on a
 * file descriptor, so a path is looked up once, as the job's user, and what
 * is mounted is what that lookup found: no symlink swapped in afterwards
 * redirects a mount made as root. */
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <linux/openat2.h>

#include "macro.h"
#include "sandbox-apply.h"
#include "sandbox-dev.h"
#include "sandbox-git.h"
#include "sandbox-landlock.h"
#include "sandbox-mount.h"
#include "sandbox-seccomp.h"

static int fail(SandboxFailure *f, int error, LaunchOption option, int entry, const char *step) {
        *f = (SandboxFailure) { .error = error, .option = option, .entry = entry, .step = step };
        return error;
}

/* PrivateNetwork: a network namespace of the job's own (or its session's,
 * join_fd), with its loopback up, as systemd's PrivateNetwork= makes one. A namespace, not Landlock:
 * Landlock filters TCP bind and connect only (ABI 4), not UDP, raw
 * sockets or the abstract Unix ones, which a namespace of its own takes
 * away all at once. */
static int private_network(int join_fd) {
        /* A session's: its loopback is up already. */
        if (join_fd >= 0)
                return setns(join_fd, CLONE_NEWNET) < 0 ? negative_errno() : 0;
        if (unshare(CLONE_NEWNET) < 0)
                return negative_errno();
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        struct ifreq ifr = {};
        memcpy(ifr.ifr_name, "lo", 3);
        int r = ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ? negative_errno() : 0;
        if (r >= 0) {
                ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
                r = ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? negative_errno() : 0;
        }
        close(fd);
        return r;
}

/* A mount namespace of the job's own, / made a slave first: no mount of
 * the job's ever reaches the host, while the host's still reach the job.
 * And System V IPC and POSIX message queues of its own, as systemd's
 * PrivateIPC= gives them: a shared memory segment of the user's outside
 * is no channel out. */
static int enter_mount_namespace(void) {
        if (unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
                return negative_errno();
        if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
                return negative_errno();
        return 0;
}

/* PrivateTmp: /tmp and /var/tmp of the job's own (/dev/shm is, in every
 * sandbox: its /dev is), gone with it:
 * a tmpfs on each, as systemd's PrivateTmp= (rather than a directory of
 * the host's /tmp: nothing to clean up, and its pages are charged to the
 * job's cgroup). Last, so that it is writable under ProtectSystem=strict.
 * A directory the job cannot reach (a container without /var/tmp, an
 * InaccessiblePaths=/var) has nothing to keep private and is left out. */
static int private_tmp(void) {
        static const char *const dirs[] = { "/tmp", "/var/tmp" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (mount("tmpfs", dirs[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0 &&
                    !(i > 0 && (errno == ENOENT || errno == EACCES || errno == ENOTDIR)))
                        return negative_errno();
        return 0;
}

/* Write the line made of parts (NULL-terminated) into a /proc file. */
static int write_proc(const char *path, const char *const *parts) {
        char line[64];
        size_t n = 0;
        for (; *parts; parts++)
                for (const char *q = *parts; *q && n < sizeof line; q++)
                        line[n++] = *q;
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int r = write(fd, line, n) == (ssize_t) n ? 0 : negative_errno();
        close(fd);
        return r;
}

/* The job's own user namespace, where its user is itself and no one else
 * is mapped (others' files show as nobody's): made so that an unprivileged
 * bgrund may make the job's other namespaces, the mount and network ones,
 * which that namespace then owns. The child holds every capability there
 * until drop_privileges() clears them; none reaches past the namespace.
 * Its groups stay as they were, and it may set no others (setgroups is
 * denied, as the kernel requires of a map written without privilege). */
static int enter_user_namespace(SandboxUserNamespace userns, int join_fd, uid_t uid, gid_t gid) {
        char u[12], g[12];
        /* A session network's, made by its first job as below: mapped. */
        if (userns == SANDBOX_USERNS_JOIN)
                return setns(join_fd, CLONE_NEWUSER) < 0 ? negative_errno() : 0;
        if (userns == SANDBOX_USERNS_MAKE && unshare(CLONE_NEWUSER) < 0)
                return negative_errno();
        const char *us = decimal_id(u, uid), *gs = decimal_id(g, gid);
        int r = write_proc("/proc/self/uid_map", (const char *const[]) { us, " ", us, " 1\n", NULL });
        if (r >= 0)
                r = write_proc("/proc/self/setgroups", (const char *const[]) { "deny", NULL });
        if (r >= 0)
                r = write_proc("/proc/self/gid_map", (const char *const[]) { gs, " ", gs, " 1\n", NULL });
        return r;
}

/* --- the mounts of the plan --------------------------------------------- */

/* Lookups as the job's user (its fsuid, fsgid and groups): a path it cannot
 * reach fails as a missing one does, and no lookup of root's follows a
 * symlink the user controls. Mounting needs CAP_SYS_ADMIN, which is not a
 * file-system capability: it stays while the fsuid is the user's. */
static int lookups_as_user(const JobSpec *s, bool own_userns) {
        /* In a user namespace of its own the job's groups are ours already. */
        if (!own_userns && setgroups(s->n_groups, s->groups) < 0)
                return negative_errno();
        (void) setfsgid(s->gid);
        (void) setfsuid(s->uid);
        /* An invalid id changes nothing and answers the current one. */
        if ((uid_t) setfsuid((uid_t) -1) != s->uid || (gid_t) setfsgid((gid_t) -1) != s->gid)
                return -EPERM;
        return 0;
}

/* What an inaccessible path becomes, as systemd's inaccessible nodes: an
 * empty directory and an empty file, both of mode 000 and root's (in a user
 * namespace of the job's own: its user's, the one mapped), on a read-only
 * tmpfs. *ret_file: the file, opened before the job's user does
 * the lookups (it may not look into the directory). */
static int make_inaccessible(uid_t owner, gid_t group, int *ret_file) {
        int dir = new_tmpfs("0", owner, group, false);
        if (dir < 0)
                return dir;
        int file = openat(dir, "file", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
        if (file >= 0) {
                close(file);
                file = openat(dir, "file", O_PATH | O_CLOEXEC | O_NOFOLLOW);
        }
        int r = file < 0 ? negative_errno() : set_read_only(dir, 0);
        if (r < 0) {
                if (file >= 0)
                        close(file);
                close(dir);
                return r;
        }
        *ret_file = file;
        return dir;
}

/* One mount of the plan, looked up in the tree as the earlier ones left
 * it; host_copy: for a read-write path, the copy of the host's tree taken
 * before anything changed. 0, or -errno and *ret_step. */
static int apply_one(const JobSpec *s, const SandboxMount *m, int fd, int host_copy, int inaccessible_dir,
                     int inaccessible_file, const char **ret_step) {
        struct statx st;
        int r = stat_fd(fd, &st);
        if (r < 0)
                return *ret_step = "look at a path", r;
        bool is_dir = S_ISDIR(st.stx_mode);
        int tree;

        switch (m->mode) {
        case SANDBOX_READ_ONLY:
                *ret_step = "make a path read-only";
                /* A mount's root is made read-only where it is (/ has no
                 * place to be covered from); anything else is covered by a
                 * read-only copy of itself. */
                if (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT && st.stx_attributes & STATX_ATTR_MOUNT_ROOT)
                        return set_read_only(fd, AT_RECURSIVE);
                tree = copy_tree(fd);
                if (tree < 0)
                        return tree;
                r = set_read_only(tree, AT_RECURSIVE);
                break;
        case SANDBOX_READ_WRITE:
                *ret_step = "keep a path writable";
                /* The copy is of what the first lookup found: a lookup that
                 * finds something else now (a symlink swapped between the
                 * two) is refused, not followed. */
                if (!same_inode(host_copy, fd))
                        return -ESTALE;
                return attach_tree(host_copy, fd);
        case SANDBOX_INACCESSIBLE:
                *ret_step = "make a path inaccessible";
                tree = open_tree(is_dir ? inaccessible_dir : inaccessible_file, "",
                                 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                r = tree < 0 ? negative_errno() : 0;
                break;
        case SANDBOX_TMPFS:
                *ret_step = "mount an empty tmpfs";
                if (!is_dir)
                        return -ENOTDIR;
                r = tree = new_tmpfs("0700", s->uid, s->gid, false);
                break;
        default:
                return -EINVAL;
        }
        if (r >= 0)
                r = attach_tree(tree, fd);
        if (tree >= 0)
                close(tree);
        return r;
}

/* Whether m is applied in a pass: the first is the plan's; the second, only
 * once a read-write path brought back a copy of the host's tree, closes
 * again every exit (also one a parent made so in the first: the copy may
 * lie beneath that parent) and every hidden path. */
static bool applies(const SandboxMount *m, int pass, bool copied) {
        if (pass == 0)
                return m->apply;
        return copied && (m->exit || (m->apply && (m->mode == SANDBOX_INACCESSIBLE || m->mode == SANDBOX_TMPFS)));
}

static int apply_mounts(const JobSpec *s, const SandboxPlan *p, bool own_userns, SandboxFailure *f) {
        int copies[SANDBOX_MOUNTS_MAX]; /* -EBADF: none; -ENOENT: an optional path not there */
        int inaccessible_dir = -EBADF, inaccessible_file = -EBADF;
        const char *step = "";
        int r = 0;

        if (p->n_mounts > SANDBOX_MOUNTS_MAX)
                return fail(f, -E2BIG, LAUNCH_OPTION_PROTECT_SYSTEM, -1, "plan the mounts");
        for (size_t i = 0; i < p->n_mounts; i++)
                copies[i] = -EBADF;
        for (size_t i = 0; i < p->n_mounts && inaccessible_dir < 0; i++)
                if (p->mounts[i].mode == SANDBOX_INACCESSIBLE && p->mounts[i].apply) {
                        inaccessible_dir = make_inaccessible(own_userns ? s->uid : 0, own_userns ? s->gid : 0,
                                                             &inaccessible_file);
                        if (inaccessible_dir < 0)
                                return fail(f, inaccessible_dir, p->mounts[i].option, -1, "make an inaccessible node");
                }
        r = lookups_as_user(s, own_userns);
        if (r < 0) {
                r = fail(f, r, p->mounts[0].option, -1, "look up paths as the job's user");
                goto done;
        }

        /* First the copies of the host's tree that read-write paths get
         * back (or are, over themselves), taken before anything is read-only. */
        for (size_t i = 0; i < p->n_mounts; i++) {
                const SandboxMount *m = &p->mounts[i];
                if (m->mode != SANDBOX_READ_WRITE || !m->apply)
                        continue;
                int fd = look_up_path(m->path);
                if (fd < 0) {
                        if (m->optional) {
                                copies[i] = -ENOENT;
                                continue;
                        }
                        r = fail(f, fd, m->option, (int) m->entry, "look up a path");
                        goto done;
                }
                copies[i] = copy_tree(fd);
                close(fd);
                if (copies[i] < 0) {
                        r = fail(f, copies[i], m->option, -1, "copy a writable path");
                        goto done;
                }
        }

        /* Then each in order, parents first, each looked up again in the
         * tree as its parents left it. A second pass closes again, over
         * whatever the copies brought back, what the plan hides and the
         * exits: a read-write path reached through a symlink is mounted
         * where the link leads, which its words do not sort by, and its
         * copy of the host's tree predates every mount (alice's
         * ReadWritePaths=/var/tmp/link, link -> /run, brought the system
         * bus back); applies() says which. The read-only paths a caller
         * asked for are not applied again: that would make the read-write
         * paths beneath them read-only too. */
        bool copied = false;
        for (int pass = 0; pass < 2 && r >= 0; pass++)
                for (size_t i = 0; i < p->n_mounts; i++) {
                        const SandboxMount *m = &p->mounts[i];
                        if (copies[i] == -ENOENT)
                                continue;
                        bool apply = applies(m, pass, copied);
                        if (pass == 1 && !apply)
                                continue;
                        int fd = look_up_path(m->path);
                        if (fd < 0 && (m->optional || pass == 1))
                                continue;
                        if (fd < 0) {
                                r = fail(f, fd, m->option, (int) m->entry, "look up a path");
                                goto done;
                        }
                        if (apply && m->mode == SANDBOX_DEV) {
                                r = sandbox_dev_build(s, p, i + 1, fd, own_userns, f);
                                close(fd);
                                if (r < 0)
                                        goto done;
                                continue;
                        }
                        r = apply ? apply_one(s, m, fd, copies[i], inaccessible_dir, inaccessible_file, &step) : 0;
                        close(fd);
                        if (r < 0) {
                                /* Changed between its two lookups: not there, as far as we can tell. */
                                r = fail(f, r, m->option, r == -ESTALE ? (int) m->entry : -1, step);
                                goto done;
                        }
                        copied = copied || (apply && m->mode == SANDBOX_READ_WRITE);
                }
done:
        close_all(copies, p->n_mounts);
        close_all((int[]) { inaccessible_dir, inaccessible_file }, 2);
        return r < 0 ? r : 0;
}

/* The job's writable mounts, looked up in its view as its user, for its
 * socket broker and its Landlock rules: the writable paths (the plan's
 * read-write mounts), the private /tmp and /var/tmp, its /dev/shm and its
 * runtime directory. */
static void find_writable(const JobSpec *spec, const SandboxPlan *plan, SandboxWritable *w) {
        char runtime[32] = "/run/user/", id[12];
        const char *uid = decimal_id(id, (unsigned) spec->uid);
        memcpy(runtime + 10, uid, strlen(uid) + 1);
        const char *own[] = { "/dev/shm", runtime, spec->private_tmp ? "/tmp" : NULL, spec->private_tmp ? "/var/tmp" : NULL };
        for (size_t i = 0; plan && i < plan->n_mounts && w->n < SANDBOX_WRITABLE_MAX; i++) {
                const SandboxMount *m = &plan->mounts[i];
                if (m->mode != SANDBOX_READ_WRITE || m->in_dev)
                        continue;
                int fd = look_up_path(m->path);
                if (fd >= 0)
                        w->fds[w->n++] = fd;
        }
        for (size_t i = 0; i < ELEMENTSOF(own) && w->n < SANDBOX_WRITABLE_MAX; i++) {
                int fd = own[i] ? look_up_path(own[i]) : -EBADF;
                if (fd >= 0)
                        w->fds[w->n++] = fd;
        }
}

void sandbox_writable_done(SandboxWritable *w) {
        close_all(w->fds, w->n);
        w->n = 0;
}

int sandbox_writable_mount_ids(const SandboxWritable *w, char *buf, size_t size) {
        size_t n = 0;
        for (size_t i = 0; i < w->n; i++) {
                struct statx st;
                if (statx(w->fds[i], "", AT_EMPTY_PATH, STATX_MNT_ID, &st) < 0 || !(st.stx_mask & STATX_MNT_ID))
                        return -EOPNOTSUPP;
                char id[12];
                const char *d = decimal_id(id, (unsigned) st.stx_mnt_id);
                size_t len = strlen(d);
                if (n + len + 2 > size)
                        return -ENOBUFS;
                if (n > 0)
                        buf[n++] = ',';
                memcpy(buf + n, d, len);
                n += len;
        }
        if (size == 0)
                return -ENOBUFS;
        buf[n] = '\0';
        return 0;
}

int sandbox_apply(const SandboxSetup *setup, SandboxWritable *writable, SandboxFailure *ret) {
        const JobSpec *spec = setup->spec;
        const SandboxPlan *plan = setup->plan;
        SandboxUserNamespace userns = setup->userns;
        LaunchOption first = sandbox_first_option(spec);
        if (first == _LAUNCH_OPTION_MAX)
                return 0;
        int r;
        if (userns != SANDBOX_USERNS_NONE) {
                r = enter_user_namespace(userns, setup->userns_fd, spec->uid, spec->gid);
                if (r < 0)
                        return fail(ret, r, first, -1, "make a user namespace");
        }
        if (spec->private_network) {
                r = private_network(setup->netns_fd);
                if (r < 0)
                        return fail(ret, r, LAUNCH_OPTION_PRIVATE_NETWORK, -1, "make a network namespace");
        }
        /* Every sandboxed job has one: its exits are mounts. */
        r = enter_mount_namespace();
        if (r < 0)
                return fail(ret, r, first, -1, "make a mount namespace");
        if (plan && plan->n_mounts > 0) {
                r = apply_mounts(spec, plan, userns != SANDBOX_USERNS_NONE, ret);
                if (r < 0)
                        return r;
        }
        if (spec->protect_git) {
                const char *step = "";
                r = sandbox_git_protect(spec, plan, setup->git_record_fd, setup->env, &step);
                if (r < 0)
                        return fail(ret, r, LAUNCH_OPTION_PROTECT_GIT, -1, step);
        }
        if (spec->private_tmp) {
                r = private_tmp();
                if (r < 0)
                        return fail(ret, r, LAUNCH_OPTION_PRIVATE_TMP, -1, "make a /tmp of its own");
        }
        find_writable(spec, plan, writable);
        /* The first of two Landlock domains: its broker's (socket-broker.h). */
        r = landlock_scope_domain();
        if (r < 0)
                return fail(ret, r, first, -1, "scope the job with Landlock");
        return 0;
}

int sandbox_confine(const JobSpec *spec, const SandboxPlan *plan, const SandboxWritable *writable, int *ret_listener,
                    SandboxFailure *ret) {
        LaunchOption first = sandbox_first_option(spec);
        int r = landlock_job_domain(plan, writable);
        if (r < 0)
                return fail(ret, r, first, -1, "confine the job with Landlock");
        SandboxFamilies families = { .restricted = spec->restrict_address_families != NULL };
        if (families.restricted &&
            launch_address_families(spec->restrict_address_families, &families.deny, &families.families) < 0)
                return fail(ret, -EINVAL, LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES, -1, "read its address families");
        r = sandbox_seccomp_install(&families, ret_listener);
        if (r < 0)
                return fail(ret, r, families.restricted ? LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES : first, -1,
                            "filter the job's socket calls with seccomp");
        return 0;
}
