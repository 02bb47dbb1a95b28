/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "fileio.h"
#include "git-placeholders.h"
#include "macro.h"

/* src's bytes at *at in buf, if they fit. */
static bool put(char *buf, size_t size, size_t *at, const char *src) {
        size_t n = strlen(src);
        if (*at + n >= size)
                return false;
        memcpy(buf + *at, src, n);
        *at += n;
        buf[*at] = '\0';
        return true;
}

/* v in decimal into buf (no stdio: the command's child calls this). */
static const char *decimal64(char buf[static 21], uint64_t v) {
        char *p = buf + 20;
        *p = '\0';
        do
                *--p = (char) ('0' + v % 10);
        while ((v /= 10) > 0);
        return p;
}

size_t git_placeholder_format_intent(char *buf, size_t size, const char *dir, const char *name, bool is_dir) {
        /* A name or directory with a tab or newline would make another line:
         * no placeholder is made there (none of git's names has one). */
        if (strpbrk(dir, "\t\n") || strpbrk(name, "\t\n"))
                return 0;
        size_t at = 0;
        bool ok = put(buf, size, &at, "P\t") && put(buf, size, &at, dir) && put(buf, size, &at, "\t") &&
                  put(buf, size, &at, name) && put(buf, size, &at, is_dir ? "\td\n" : "\tf\n");
        return ok ? at : 0;
}

size_t git_placeholder_format_made(char *buf, size_t size, unsigned major, unsigned minor, uint64_t ino) {
        char a[21], b[21], c[21];
        size_t at = 0;
        bool ok = put(buf, size, &at, "I\t") && put(buf, size, &at, decimal64(a, major)) && put(buf, size, &at, ":") &&
                  put(buf, size, &at, decimal64(b, minor)) && put(buf, size, &at, "\t") &&
                  put(buf, size, &at, decimal64(c, ino)) && put(buf, size, &at, "\n");
        return ok ? at : 0;
}

void git_placeholders_free(GitPlaceholder *p, size_t n) {
        for (size_t i = 0; p && i < n; i++) {
                free(p[i].dir);
                free(p[i].name);
        }
        free(p);
}

/* The record is at most this big: a job's writable paths (64) times the
 * placeholders one repository can need, each line a path's length. */
#define RECORD_MAX (1024 * 1024)

int git_placeholders_read(int dir_fd, GitPlaceholder **ret, size_t *ret_n) {
        *ret = NULL;
        *ret_n = 0;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_file_at(dir_fd, GIT_PLACEHOLDERS_FILE, RECORD_MAX, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        GitPlaceholder *list = NULL;
        size_t n = 0;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (!next)
                        break; /* a line cut short by a crash */
                *next++ = '\0';
                if (line[0] == 'P' && line[1] == '\t') {
                        char *dir = line + 2, *name = strchr(dir, '\t'), *type = name ? strchr(name + 1, '\t') : NULL;
                        if (!type)
                                continue;
                        *name++ = '\0';
                        *type++ = '\0';
                        GitPlaceholder *more = realloc(list, (n + 1) * sizeof *list);
                        if (!more) {
                                git_placeholders_free(list, n);
                                return -ENOMEM;
                        }
                        list = more;
                        list[n] = (GitPlaceholder) { .dir = strdup(dir), .name = strdup(name), .is_dir = type[0] == 'd' };
                        if (!list[n].dir || !list[n].name) {
                                git_placeholders_free(list, n + 1);
                                return -ENOMEM;
                        }
                        n++;
                } else if (line[0] == 'I' && line[1] == '\t' && n > 0 && !list[n - 1].made) {
                        unsigned long long ino;
                        unsigned major, minor;
                        if (sscanf(line + 2, "%u:%u\t%llu", &major, &minor, &ino) == 3) {
                                list[n - 1].made = true;
                                list[n - 1].major = major;
                                list[n - 1].minor = minor;
                                list[n - 1].ino = ino;
                        }
                }
        }
        /* Only what was made is anyone's to remove. */
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
                if (list[i].made) {
                        list[kept++] = list[i];
                        continue;
                }
                free(list[i].dir);
                free(list[i].name);
        }
        *ret = list;
        *ret_n = kept;
        return 0;
}

static int remove_one(const GitPlaceholder *p) {
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int dir = (int) syscall(SYS_openat2, AT_FDCWD, p->dir, &how, sizeof how);
        if (dir < 0)
                return errno == ENOENT ? 0 : -errno;
        how = (struct open_how) { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                  .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, dir, p->name, &how, sizeof how);
        if (fd < 0)
                return errno == ENOENT || errno == ELOOP ? 0 : -errno;
        struct statx st;
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_SIZE, &st) < 0)
                return -errno;
        if (st.stx_ino != p->ino || st.stx_dev_major != p->major || st.stx_dev_minor != p->minor ||
            S_ISDIR(st.stx_mode) != p->is_dir || (!p->is_dir && (!S_ISREG(st.stx_mode) || st.stx_size != 0)))
                return 0; /* not ours any more: the user's */
        /* A directory goes only while empty (rmdir's own rule). */
        if (unlinkat(dir, p->name, p->is_dir ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT && errno != ENOTEMPTY &&
            errno != EEXIST)
                return -errno;
        return 0;
}

int git_placeholders_remove(const GitPlaceholder *p, size_t n) {
        int ret = 0;
        /* The last made first: one made inside another goes before it. */
        for (size_t i = n; i > 0; i--) {
                int r = remove_one(&p[i - 1]);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

bool git_placeholders_pending(int dir_fd) {
        struct stat st;
        return fstatat(dir_fd, GIT_PLACEHOLDERS_FILE, &st, 0) >= 0 && st.st_size > 0;
}

int git_placeholders_forget(int dir_fd) {
        if (unlinkat(dir_fd, GIT_PLACEHOLDERS_FILE, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int git_placeholders_create(int dir_fd) {
        int fd = openat(dir_fd, GIT_PLACEHOLDERS_FILE, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}
