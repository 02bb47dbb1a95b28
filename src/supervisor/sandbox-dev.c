/* SPDX-License-Identifier: MIT */
/* A sandboxed job's own /dev, as bubblewrap's --dev and a container's: the
 * host's terminals, disks, kmsg and console are not in it, and the
 * terminals the job opens come from a devpts instance of its own. */
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox-dev.h"
#include "sandbox-mount.h"

/* Whether path is below /dev, and its name there. */
static const char *below_dev(const char *path) {
        return strncmp(path, "/dev/", 5) == 0 && path[5] ? path + 5 : NULL;
}

/* rel's parent directories in the tree at dir (its last component not). */
static int make_parents(int dir, const char *rel) {
        char buf[LAUNCH_PATH_MAX_BYTES + 1];
        size_t n = strlen(rel);
        if (n >= sizeof buf)
                return -ENAMETOOLONG;
        memcpy(buf, rel, n + 1);
        for (size_t i = 1; i < n; i++)
                if (buf[i] == '/') {
                        buf[i] = '\0';
                        if (mkdirat(dir, buf, 0755) < 0 && errno != EEXIST)
                                return negative_errno();
                        buf[i] = '/';
                }
        return 0;
}

/* An empty node at rel in the tree at dir to mount source on: a directory
 * for a directory, else a file. */
static int make_mount_point(int dir, const char *rel, bool is_dir) {
        int r = make_parents(dir, rel);
        if (r < 0)
                return r;
        if (is_dir)
                return mkdirat(dir, rel, 0755) < 0 && errno != EEXIST ? negative_errno() : 0;
        int fd = openat(dir, rel, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();
        close(fd);
        return 0;
}

/* A new devpts instance, as a container's: its ptmx open to everyone (each
 * pty is its opener's), none of the host's terminals in it. */
static int new_devpts(void) {
        int fs = fsopen("devpts", FSOPEN_CLOEXEC);
        if (fs < 0)
                return negative_errno();
        int r = -EBADF;
        if (fsconfig(fs, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) >= 0 &&
            fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) >= 0 &&
            fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0600", 0) >= 0 &&
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) >= 0)
                r = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (r < 0)
                r = negative_errno();
        close(fs);
        return r;
}

#define DEV_NODES 6
#define DEV_SOURCES_MAX (DEV_NODES + 3 * LAUNCH_PATHS_MAX)

/* /dev as a job's own, over dev_fd (the /dev the job sees so far, the
 * host's), as bubblewrap's --dev makes one: null, zero, full, random,
 * urandom and tty bound from the host's; a new devpts instance with ptmx
 * pointing into it, so a terminal opened in the job is the job's and none
 * of the host's is there; a shm of its own; the devices the plan's paths
 * below /dev name (p->mounts[first...], in_dev), bound in; then read-only,
 * so nothing can be made in it. The sources are looked up, as the job's
 * user, before the host's /dev is covered. */
int sandbox_dev_build(const JobSpec *s, const SandboxPlan *p, size_t first, int dev_fd, bool own_userns,
                     SandboxFailure *f) {
        static const char *const nodes[DEV_NODES] = { "null", "zero", "full", "random", "urandom", "tty" };
        int sources[DEV_SOURCES_MAX];
        const char *names[DEV_SOURCES_MAX];
        bool dirs[DEV_SOURCES_MAX], read_only[DEV_SOURCES_MAX];
        size_t n = 0;
        int tmpfs = -EBADF, r = 0;
        const char *step = "look up the host's devices";
        LaunchOption option = p->mounts[first - 1].option;
        int entry = -1;

        for (size_t i = 0; i < DEV_NODES; i++) {
                int fd = openat(dev_fd, nodes[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        continue; /* a container's /dev may lack one: the job's lacks it too */
                struct statx st;
                if (stat_fd(fd, &st) < 0 || !S_ISCHR(st.stx_mode)) {
                        close(fd);
                        continue;
                }
                sources[n] = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                close(fd);
                if (sources[n] < 0) {
                        r = negative_errno();
                        goto done;
                }
                names[n] = nodes[i];
                dirs[n] = read_only[n] = false;
                n++;
        }
        for (size_t i = first; i < p->n_mounts && below_dev(p->mounts[i].path); i++) {
                const SandboxMount *m = &p->mounts[i];
                if (!m->in_dev)
                        continue; /* below a device: its own mount, later */
                int fd = look_up_path(m->path);
                if (fd < 0 && m->optional)
                        continue;
                if (fd < 0) {
                        r = fd;
                        option = m->option;
                        entry = (int) m->entry;
                        step = "look up a path";
                        goto done;
                }
                struct statx st;
                r = stat_fd(fd, &st);
                sources[n] = r < 0 ? r : copy_tree(fd);
                close(fd);
                if (sources[n] < 0) {
                        r = sources[n];
                        option = m->option;
                        goto done;
                }
                names[n] = below_dev(m->path);
                dirs[n] = S_ISDIR(st.stx_mode);
                read_only[n] = m->mode == SANDBOX_READ_ONLY;
                n++;
        }

        step = "make a /dev of its own";
        tmpfs = new_tmpfs("0755", own_userns ? s->uid : 0, own_userns ? s->gid : 0, false);
        if (tmpfs < 0) {
                r = tmpfs;
                goto done;
        }
        /* Its nodes are made as root's (the lookups are the user's): the
         * kernel gives the file-system capabilities back with fsuid 0. */
        if (!own_userns)
                fs_ids(0, 0);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = make_mount_point(tmpfs, names[i], dirs[i]);
        if (r >= 0 && (mkdirat(tmpfs, "pts", 0755) < 0 || mkdirat(tmpfs, "shm", 01777) < 0 ||
                       symlinkat("pts/ptmx", tmpfs, "ptmx") < 0 || symlinkat("/proc/self/fd", tmpfs, "fd") < 0 ||
                       symlinkat("/proc/self/fd/0", tmpfs, "stdin") < 0 ||
                       symlinkat("/proc/self/fd/1", tmpfs, "stdout") < 0 ||
                       symlinkat("/proc/self/fd/2", tmpfs, "stderr") < 0))
                r = negative_errno();
        if (!own_userns)
                fs_ids(s->uid, s->gid);
        if (r >= 0)
                r = attach_tree(tmpfs, dev_fd);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (read_only[i])
                        r = set_read_only(sources[i], AT_RECURSIVE);
                if (r >= 0)
                        r = attach_at(sources[i], tmpfs, names[i]);
        }
        if (r < 0)
                goto done;

        step = "mount a devpts instance of its own";
        int pts = new_devpts();
        r = pts < 0 ? pts : attach_at(pts, tmpfs, "pts");
        if (pts >= 0)
                close(pts);
        if (r < 0)
                goto done;

        step = "mount a /dev/shm of its own";
        int shm = new_tmpfs("1777", own_userns ? s->uid : 0, own_userns ? s->gid : 0, true);
        r = shm < 0 ? shm : attach_at(shm, tmpfs, "shm");
        if (shm >= 0)
                close(shm);
        if (r >= 0) {
                step = "make /dev read-only";
                r = set_read_only(tmpfs, 0);
        }
done:
        close_all(sources, n);
        if (tmpfs >= 0)
                close(tmpfs);
        if (r < 0)
                *f = (SandboxFailure) { .error = r, .option = option, .entry = entry, .step = step };
        return r < 0 ? r : 0;
}

