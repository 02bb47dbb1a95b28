/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

int loop_write(int fd, const void *data, size_t len) {
        const uint8_t *p = data;

        while (len > 0) {
                ssize_t k = write(fd, p, len);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        return -EIO;
                p += k;
                len -= (size_t) k;
        }
        return 0;
}

/* Split "a/b/c" into a directory fd for "a/b" and the last component "c", so
 * that the temp file and the fsync'd directory are the ones that really hold
 * the final name. *ret_dirfd is -EBADF when dirfd itself is that directory. */
static int open_parent(int dirfd, const char *name, int *ret_dirfd, const char **ret_base) {
        const char *slash = strrchr(name, '/');
        _cleanup_free_ char *dir = NULL;
        int fd;

        if (!slash) {
                *ret_dirfd = -EBADF;
                *ret_base = name;
                return 0;
        }

        if (slash[1] == '\0')
                return -EISDIR;

        if (slash == name)
                dir = strdup("/");
        else
                dir = strndup(name, (size_t) (slash - name));
        if (!dir)
                return -ENOMEM;

        fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        *ret_dirfd = fd;
        *ret_base = slash + 1;
        return 0;
}

static int make_temp_name(const char *base, char **ret) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        uint8_t rnd[8];
        char suffix[sizeof(rnd) + 1];
        char *t;
        ssize_t k;

        do
                k = getrandom(rnd, sizeof(rnd), 0);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();
        if ((size_t) k != sizeof(rnd))
                return -EIO;

        for (size_t i = 0; i < sizeof(rnd); i++)
                suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
        suffix[sizeof(rnd)] = '\0';

        /* Hidden, and clearly a leftover of ours if a crash strands it. */
        if (asprintf(&t, ".#%s.%s", base, suffix) < 0)
                return -ENOMEM;

        *ret = t;
        return 0;
}

int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                         WriteFileFlags flags) {
        _cleanup_close_ int parent_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *tmp = NULL;
        const char *base;
        int dfd, r;

        if (!name || !*name || (len > 0 && !data) || (mode & ~07777))
                return -EINVAL;

        r = open_parent(dirfd, name, &parent_fd, &base);
        if (r < 0)
                return r;
        dfd = parent_fd >= 0 ? parent_fd : dirfd;

        if (streq(base, ".") || streq(base, ".."))
                return -EISDIR;

        /* O_TMPFILE + linkat() cannot replace an existing name; we need
         * rename(), so the temp file gets a real, unique name. */
        for (unsigned attempt = 0;; attempt++) {
                free(tmp);
                tmp = NULL;
                r = make_temp_name(base, &tmp);
                if (r < 0)
                        return r;

                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
                if (fd >= 0)
                        break;
                if (errno != EEXIST || attempt >= 16)
                        return negative_errno();
        }

        r = loop_write(fd, data, len);
        if (r < 0)
                goto fail;

        /* fchmod() and not the open() mode: the umask must not decide what
         * the final file looks like. */
        if (fchmod(fd, mode) < 0) {
                r = negative_errno();
                goto fail;
        }

        if (renameat(dfd, tmp, dfd, base) < 0) {
                r = negative_errno();
                goto fail;
        }

        /* After the rename, so that one commit makes both the content and
         * the name durable. The new content is in place already: a failure
         * is reported, and there is nothing to undo. */
        if ((flags & WRITE_FILE_DURABLE) && fsync(fd) < 0)
                return negative_errno();
        return 0;

fail:
        (void) unlinkat(dfd, tmp, 0);
        return r;
}

int sync_file_at(int dirfd, const char *name) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return fsync(fd) < 0 ? negative_errno() : 0;
}

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc, cap;
        struct stat st;

        if (fd < 0 || !ret)
                return -EINVAL;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;

        if (st.st_size > 0 && (uintmax_t) st.st_size > max)
                return -EFBIG;

        /* st_size is only a hint: files in /proc claim 0, and the file may
         * grow while we read it. We hold at most one byte more than allowed,
         * which is how "exactly max" is told apart from "too big". */
        cap = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;
        alloc = st.st_size > 0 ? (size_t) st.st_size + 1 : 4096;
        if (alloc > cap)
                alloc = cap;
        alloc++; /* the NUL */

        buf = malloc(alloc);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t k;

                if (size == alloc - 1) {
                        size_t n = alloc > SIZE_MAX / 2 ? SIZE_MAX : alloc * 2;
                        char *p;

                        if (n > cap + 1)
                                n = cap + 1;

                        p = realloc(buf, n);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        alloc = n;
                }

                k = read(fd, buf + size, alloc - 1 - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;

                size += (size_t) k;
                if (size > max)
                        return -EFBIG;
        }

        buf[size] = '\0';

        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = size;
        return 0;
}

int read_file_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        if (!name || !ret)
                return -EINVAL;

        /* O_NONBLOCK so that a FIFO planted under the name cannot hang us in
         * open(); it is refused as not regular right after. */
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();

        return read_full_fd(fd, max, ret, ret_len);
}

static int rm_rf_children(int fd, dev_t dev);

int rm_rf_at(int dirfd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!name || !*name || streq(name, ".") || streq(name, ".."))
                return -EINVAL;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();

        if (!S_ISDIR(st.st_mode)) {
                if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                        return negative_errno();
                return 0;
        }

        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                /* Swapped for a symlink or file since the fstatat(): remove
                 * that instead, still without following it. */
                if (errno == ENOTDIR || errno == ELOOP) {
                        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                                return negative_errno();
                        return 0;
                }
                return negative_errno();
        }

        r = rm_rf_children(TAKE_FD(fd), st.st_dev);

        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return r < 0 ? r : negative_errno();

        return r;
}

/* Takes ownership of fd. Keeps going past errors so that as much as possible
 * is removed, and returns the first one. */
static int rm_rf_children(int fd, dev_t dev) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int ret = 0;

        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }

        for (;;) {
                struct stat st;
                int r = 0;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0 && ret == 0)
                                ret = negative_errno();
                        break;
                }

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;

                if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) {
                        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                                if (errno != ENOENT && ret == 0)
                                        ret = negative_errno();
                                continue;
                        }

                        /* Something mounted below us is not ours to empty:
                         * refuse rather than wipe another file system. */
                        if (S_ISDIR(st.st_mode) && st.st_dev != dev) {
                                if (ret == 0)
                                        ret = -EXDEV;
                                continue;
                        }

                        r = rm_rf_at(dirfd(d), de->d_name);
                } else if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
                        r = negative_errno();

                if (r < 0 && ret == 0)
                        ret = r;
        }

        return ret;
}
