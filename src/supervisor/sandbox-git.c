/* SPDX-License-Identifier: MIT */
/* ProtectGit (sandbox-git.h): system calls only, buffers on the stack. */
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "git-placeholders.h"
#include "macro.h"
#include "sandbox-git.h"
#include "sandbox-mount.h"

#define PATH_BUF 4096

typedef struct Git {
        const JobSpec *spec;
        int record_fd;
        char *const *env;
        int empty_dir, empty_file; /* read-only covers for placeholders */
        const char *step;
} Git;

/* a + "/" + b into buf (a "/" of its own: no doubled slash). */
static bool join(char buf[static PATH_BUF], const char *a, const char *b) {
        size_t n = strlen(a), k = strlen(b);
        bool slash = n > 0 && a[n - 1] != '/';
        if (n + slash + k + 1 > PATH_BUF)
                return false;
        memmove(buf, a, n);
        if (slash)
                buf[n++] = '/';
        memcpy(buf + n, b, k + 1);
        return true;
}

/* path's entry as it is (a symlink not followed): its type, or 0 where there is none. */
static mode_t type_of(const char *path) {
        struct statx st;
        if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &st) < 0)
                return 0;
        return st.stx_mode & S_IFMT;
}

/* path's copy over itself: a mount point of its own, which cannot be
 * renamed, removed or replaced while the job runs (and what is mounted
 * inside stays put); read-only too, or not. */
static int bind_over_itself(const char *path, bool read_only) {
        int fd = look_up_path(path);
        if (fd < 0)
                return fd;
        int tree = copy_tree(fd);
        int r = tree < 0 ? tree : read_only ? set_read_only(tree, AT_RECURSIVE) : 0;
        if (r >= 0)
                r = attach_tree(tree, fd);
        if (tree >= 0)
                close(tree);
        close(fd);
        return r;
}

static int read_only(const char *path) {
        return bind_over_itself(path, true);
}

static int pin(const char *path) {
        return bind_over_itself(path, false);
}

/* tree (a cover) over path's own entry, a symlink included. */
static int cover(int tree, const char *path) {
        int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int copy = open_tree(tree, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        int r = copy < 0 ? negative_errno() : attach_tree(copy, fd);
        if (copy >= 0)
                close(copy);
        close(fd);
        return r;
}

static int record(Git *g, const char *line, size_t len, bool sync) {
        if (len == 0 || write(g->record_fd, line, len) != (ssize_t) len)
                return len == 0 ? -ENAMETOOLONG : negative_errno();
        return sync && fdatasync(g->record_fd) < 0 ? negative_errno() : 0;
}

/* A placeholder for dir/name, as the job's user: recorded (and synced)
 * first, made, its inode recorded, then covered read-only. Where it cannot
 * be made (a read-only place, or something there by now) the job cannot
 * make one either, or there is one already: nothing to do. */
static int placeholder(Git *g, const char *dir, const char *name, bool is_dir) {
        char line[PATH_BUF + 300], path[PATH_BUF];
        if (!join(path, dir, name))
                return 0;
        int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return 0;
        g->step = "record a placeholder";
        int r = record(g, line, git_placeholder_format_intent(line, sizeof line, dir, name, is_dir), true);
        if (r < 0) {
                close(dfd);
                return r;
        }
        int fd = is_dir ? mkdirat(dfd, name, 0755) : openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                close(dfd);
                return 0; /* EROFS, EEXIST, EACCES: nothing was made */
        }
        if (!is_dir)
                close(fd);
        struct statx st;
        r = statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_INO, &st) < 0 ? negative_errno() : 0;
        close(dfd);
        if (r < 0)
                return r;
        r = record(g, line, git_placeholder_format_made(line, sizeof line, st.stx_dev_major, st.stx_dev_minor, st.stx_ino),
                   false);
        if (r < 0)
                return r;
        g->step = "cover a placeholder";
        return cover(is_dir ? g->empty_dir : g->empty_file, path);
}

/* The job's HOME, for a ~/ path. */
static const char *home(const Git *g) {
        for (char *const *e = g->env; e && *e; e++)
                if (strncmp(*e, "HOME=", 5) == 0)
                        return *e + 5;
        return NULL;
}

/* A git config's words, as far as ProtectGit needs them: core.hooksPath
 * (into hooks_path) and extensions.worktreeConfig. The first 64 KiB of
 * it; case-insensitive names, a value's quotes and spaces stripped. */
static void read_config(const char *path, char hooks_path[static PATH_BUF], bool *worktree_config) {
        char text[64 * 1024];
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return;
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        if (n <= 0)
                return;
        text[n] = '\0';
        char section[32] = "";
        for (char *line = text, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                line += strspn(line, " \t");
                if (*line == '[') {
                        size_t k = strcspn(line + 1, "] \t\"");
                        if (k >= sizeof section)
                                k = sizeof section - 1;
                        memcpy(section, line + 1, k);
                        section[k] = '\0';
                        continue;
                }
                char *eq = strchr(line, '=');
                if (!eq)
                        continue;
                char *key_end = eq;
                while (key_end > line && (key_end[-1] == ' ' || key_end[-1] == '\t'))
                        key_end--;
                char *value = eq + 1;
                value += strspn(value, " \t");
                size_t v = strcspn(value, "#;");
                while (v > 0 && (value[v - 1] == ' ' || value[v - 1] == '\t' || value[v - 1] == '\r'))
                        v--;
                if (v >= 2 && value[0] == '"' && value[v - 1] == '"') {
                        value++;
                        v -= 2;
                }
                size_t key = (size_t) (key_end - line);
                if (strcasecmp(section, "core") == 0 && key == 9 && strncasecmp(line, "hooksPath", 9) == 0 && v < PATH_BUF) {
                        memcpy(hooks_path, value, v);
                        hooks_path[v] = '\0';
                } else if (strcasecmp(section, "extensions") == 0 && key == 14 &&
                           strncasecmp(line, "worktreeConfig", 14) == 0)
                        *worktree_config = (v == 4 && strncasecmp(value, "true", 4) == 0) ||
                                           (v == 3 && strncasecmp(value, "yes", 3) == 0) || (v == 1 && value[0] == '1');
        }
}

/* What git in gitdir (of the working tree top) runs or reads: read-only,
 * or a placeholder where missing. */
static int protect_gitdir(Git *g, const char *top, const char *gitdir, bool worktrees) {
        char path[PATH_BUF], hooks_path[PATH_BUF] = "";
        if (type_of(gitdir) != S_IFDIR)
                return 0;
        g->step = "pin a git directory";
        int r = pin(gitdir);
        if (r < 0)
                return r;
        bool worktree_config = false;
        if (join(path, gitdir, "config"))
                read_config(path, hooks_path, &worktree_config);

        static const struct { const char *name; bool is_dir, needed; } parts[] = {
                { "hooks", true, true }, { "config", false, true }, { "config.worktree", false, false }, { "info", true, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                if (!join(path, gitdir, parts[i].name))
                        continue;
                mode_t t = type_of(path);
                g->step = "make git's hooks and config read-only";
                if (t == S_IFLNK) {
                        /* A symlinked hooks/: where it leads, read-only; the
                         * link itself covered, so it cannot be pointed
                         * elsewhere (the job's git then runs no hooks). */
                        (void) read_only(path);
                        r = cover(g->empty_file, path);
                } else if (t != 0)
                        r = read_only(path);
                else if (parts[i].needed || (worktree_config && streq(parts[i].name, "config.worktree")))
                        r = placeholder(g, gitdir, parts[i].name, parts[i].is_dir);
                if (r < 0)
                        return r;
        }

        /* core.hooksPath: taken from the working tree's top, ~/ from HOME. */
        if (hooks_path[0]) {
                char where[PATH_BUF];
                const char *h = home(g);
                bool ok = hooks_path[0] == '/'                                    ? join(where, "", hooks_path)
                          : strncmp(hooks_path, "~/", 2) == 0 && h             ? join(where, h, hooks_path + 2)
                                                                                  : join(where, top, hooks_path);
                if (ok && type_of(where) == S_IFDIR) {
                        g->step = "make core.hooksPath read-only";
                        r = read_only(where);
                        if (r < 0)
                                return r;
                }
        }

        /* Each linked worktree's own config. */
        if (!worktrees || !join(path, gitdir, "worktrees"))
                return 0;
        int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return 0;
        char entries[2048];
        long n;
        while (r >= 0 && (n = syscall(SYS_getdents64, dir, entries, sizeof entries)) > 0)
                for (long off = 0; r >= 0 && off < n;) {
                        const struct linux_dirent64 *d = (const struct linux_dirent64 *) (entries + off);
                        off += d->d_reclen;
                        char wt[PATH_BUF], cfg[PATH_BUF];
                        if (d->d_name[0] == '.' || !join(wt, path, d->d_name) || !join(cfg, wt, "config.worktree"))
                                continue;
                        if (type_of(cfg) == S_IFREG)
                                r = read_only(cfg);
                }
        close(dir);
        return r;
}

/* A gitdir: or commondir file's path (the first line; relative to base). */
static bool read_pointer(const char *file, const char *prefix, const char *base, char out[static PATH_BUF]) {
        char text[PATH_BUF];
        int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        if (n <= 0)
                return false;
        text[n] = '\0';
        text[strcspn(text, "\r\n")] = '\0';
        size_t p = strlen(prefix);
        if (strncmp(text, prefix, p) != 0 || !text[p])
                return false;
        const char *target = text + p;
        return target[0] == '/' ? join(out, "", target) : join(out, base, target);
}

/* The repository at top, if there is one; a placeholder .git if not. */
static int protect_top(Git *g, const char *top) {
        char dotgit[PATH_BUF], gitdir[PATH_BUF], common[PATH_BUF];
        if (type_of(top) != S_IFDIR || !join(dotgit, top, ".git"))
                return 0;
        int r;
        switch (type_of(dotgit)) {
        case 0:
                return placeholder(g, top, ".git", true);
        case S_IFDIR:
                return protect_gitdir(g, top, dotgit, true);
        case S_IFREG:
                /* A linked worktree's or a separate git dir's pointer: it
                 * stays pointing where it does. */
                g->step = "make .git read-only";
                r = read_only(dotgit);
                if (r < 0 || !read_pointer(dotgit, "gitdir: ", top, gitdir))
                        return r;
                r = protect_gitdir(g, top, gitdir, false);
                if (r >= 0 && join(common, gitdir, "commondir") && read_pointer(common, "", gitdir, dotgit))
                        r = protect_gitdir(g, top, dotgit, true);
                return r;
        case S_IFLNK: {
                /* Covered by a read-only file that names where it leads. */
                char target[PATH_BUF];
                ssize_t n = readlink(dotgit, target, sizeof target - 1);
                if (n <= 0)
                        return 0;
                target[n] = '\0';
                if (!(target[0] == '/' ? join(gitdir, "", target) : join(gitdir, top, target)))
                        return 0;
                r = protect_gitdir(g, top, gitdir, true);
                if (r < 0)
                        return r;
                char text[PATH_BUF + 16];
                size_t at = 0;
                memcpy(text, "gitdir: ", 8);
                at = 8;
                size_t k = strlen(gitdir);
                memcpy(text + at, gitdir, k);
                at += k;
                text[at++] = '\n';
                int fs = new_tmpfs("0755", g->spec->uid, g->spec->gid, false);
                if (fs < 0)
                        return fs;
                int f = openat(fs, "gitdir", O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
                r = f < 0 || write(f, text, at) != (ssize_t) at ? negative_errno() : 0;
                if (f >= 0)
                        close(f);
                int file = r < 0 ? -EBADF : openat(fs, "gitdir", O_PATH | O_CLOEXEC);
                if (r >= 0 && file < 0)
                        r = negative_errno();
                if (r >= 0)
                        r = set_read_only(fs, 0);
                if (r >= 0)
                        r = cover(file, dotgit);
                if (file >= 0)
                        close(file);
                close(fs);
                return r;
        }
        default:
                return 0;
        }
}

int sandbox_git_protect(const JobSpec *s, const SandboxPlan *plan, int record_fd, char *const *env,
                        const char **ret_step) {
        if (!s->protect_git || !plan)
                return 0;
        Git g = { .spec = s, .record_fd = record_fd, .env = env, .empty_dir = -EBADF, .empty_file = -EBADF };
        int r = 0;
        for (size_t i = 0; r >= 0 && i < plan->n_mounts; i++) {
                const SandboxMount *m = &plan->mounts[i];
                if (m->option != LAUNCH_OPTION_READ_WRITE_PATHS || m->mode != SANDBOX_READ_WRITE || m->in_dev)
                        continue;
                if (g.empty_dir < 0) {
                        /* The covers: an empty directory and an empty file, read-only. */
                        g.step = "make the placeholders' covers";
                        g.empty_dir = new_tmpfs("0755", s->uid, s->gid, false);
                        if (g.empty_dir < 0) {
                                r = g.empty_dir;
                                break;
                        }
                        int f = openat(g.empty_dir, "file", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
                        if (f >= 0) {
                                close(f);
                                g.empty_file = openat(g.empty_dir, "file", O_PATH | O_CLOEXEC);
                        }
                        r = g.empty_file < 0 ? negative_errno() : set_read_only(g.empty_dir, 0);
                        if (r < 0)
                                break;
                }
                if (record_fd < 0) {
                        r = -EBADF;
                        g.step = "open the placeholder record";
                        break;
                }
                r = protect_top(&g, m->path);
        }
        close_all((int[]) { g.empty_dir, g.empty_file }, 2);
        *ret_step = g.step;
        return r;
}
