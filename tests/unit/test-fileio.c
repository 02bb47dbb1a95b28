/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

static char tmpdir[] = "/tmp/test-fileio.XXXXXX";
static char outside[] = "/tmp/test-fileio-outside.XXXXXX";
static int dfd = -EBADF;

static void setup(void) {
        cr_assert_not_null(mkdtemp(tmpdir));
        cr_assert_not_null(mkdtemp(outside));
        dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dfd, 0);
}

static void teardown(void) {
        safe_close(dfd);
        (void) rm_rf_at(AT_FDCWD, tmpdir);
        (void) rm_rf_at(AT_FDCWD, outside);
}

TestSuite(fileio, .init = setup, .fini = teardown);

/* Entries other than . and ..; enough to spot a stray temp file. */
static unsigned count_entries(int fd) {
        int copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;
        unsigned n = 0;
        DIR *d;

        cr_assert_geq(copy, 0);
        d = fdopendir(copy);
        cr_assert_not_null(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

static void write_plain(int fd, const char *name, const char *s) {
        int f = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        cr_assert_geq(f, 0);
        cr_assert_eq(write(f, s, strlen(s)), (ssize_t) strlen(s));
        close(f);
}

Test(fileio, roundtrip) {
        char *s = NULL;
        size_t len = 0;

        cr_assert_eq(write_file_atomic_at(dfd, "f", "hello\n", 6, 0600, 0), 0);
        cr_assert_eq(read_file_at(dfd, "f", 1024, &s, &len), 0);
        cr_assert_eq(len, 6);
        cr_assert_str_eq(s, "hello\n");
        cr_assert_eq(count_entries(dfd), 1, "temp file left behind");
        free(s);

        /* ret_len is optional. */
        cr_assert_eq(read_file_at(dfd, "f", 1024, &s, NULL), 0);
        cr_assert_str_eq(s, "hello\n");
        free(s);
}

Test(fileio, empty_file) {
        char *s = NULL;
        size_t len = 99;

        cr_assert_eq(write_file_atomic_at(dfd, "empty", NULL, 0, 0600, 0), 0);
        cr_assert_eq(read_file_at(dfd, "empty", 0, &s, &len), 0);
        cr_assert_eq(len, 0);
        cr_assert_str_eq(s, "");
        free(s);
}

Test(fileio, replace) {
        char *s = NULL;

        cr_assert_eq(write_file_atomic_at(dfd, "f", "old old old", 11, 0600, 0), 0);
        cr_assert_eq(write_file_atomic_at(dfd, "f", "new", 3, 0600, 0), 0);
        cr_assert_eq(read_file_at(dfd, "f", 1024, &s, NULL), 0);
        cr_assert_str_eq(s, "new");
        cr_assert_eq(count_entries(dfd), 1, "temp file left behind");
        free(s);
}

Test(fileio, large_roundtrip) {
        size_t n = 300 * 1000 + 7;
        char *data = malloc(n), *s = NULL;
        size_t len = 0;

        cr_assert_not_null(data);
        for (size_t i = 0; i < n; i++)
                data[i] = (char) ('a' + i % 26);

        cr_assert_eq(write_file_atomic_at(dfd, "big", data, n, 0600, 0), 0);
        cr_assert_eq(read_file_at(dfd, "big", n, &s, &len), 0);
        cr_assert_eq(len, n);
        cr_assert_eq(memcmp(s, data, n), 0);
        cr_assert_eq(s[n], '\0');
        free(s);
        free(data);
}

Test(fileio, mode_ignores_umask) {
        struct stat st;

        umask(0077);
        cr_assert_eq(write_file_atomic_at(dfd, "f", "x", 1, 0644, 0), 0);
        cr_assert_eq(fstatat(dfd, "f", &st, 0), 0);
        cr_assert_eq(st.st_mode & 07777, 0644, "mode is %o", st.st_mode & 07777);

        /* Replacing takes the new mode, not the old file's. */
        cr_assert_eq(write_file_atomic_at(dfd, "f", "y", 1, 0600, 0), 0);
        cr_assert_eq(fstatat(dfd, "f", &st, 0), 0);
        cr_assert_eq(st.st_mode & 07777, 0600, "mode is %o", st.st_mode & 07777);
}

Test(fileio, subdirectory_name) {
        char *s = NULL;

        cr_assert_eq(mkdirat(dfd, "sub", 0700), 0);
        cr_assert_eq(write_file_atomic_at(dfd, "sub/f", "in sub", 6, 0600, 0), 0);
        cr_assert_eq(read_file_at(dfd, "sub/f", 100, &s, NULL), 0);
        cr_assert_str_eq(s, "in sub");
        free(s);
        cr_assert_eq(count_entries(dfd), 1);
}

Test(fileio, failed_write_leaves_no_temp) {
        cr_assert_eq(mkdirat(dfd, "d", 0700), 0);
        write_plain(dfd, "d/keep", "x");

        /* rename() of a file over a directory fails after the temp file was
         * written; the temp must be cleaned up. */
        cr_assert_lt(write_file_atomic_at(dfd, "d", "data", 4, 0600, 0), 0);
        cr_assert_eq(count_entries(dfd), 1, "temp file left behind");
}

Test(fileio, invalid_arguments) {
        char *s = (char *) "untouched";

        cr_assert_eq(write_file_atomic_at(dfd, "", "x", 1, 0600, 0), -EINVAL);
        cr_assert_eq(write_file_atomic_at(dfd, NULL, "x", 1, 0600, 0), -EINVAL);
        cr_assert_eq(write_file_atomic_at(dfd, "f", NULL, 1, 0600, 0), -EINVAL);
        cr_assert_eq(read_file_at(dfd, NULL, 10, &s, NULL), -EINVAL);
        cr_assert_str_eq(s, "untouched");
}

Test(fileio, read_refuses_symlink) {
        char *s = (char *) "untouched";
        size_t len = 42;

        write_plain(dfd, "target", "secret");
        cr_assert_eq(symlinkat("target", dfd, "link"), 0);

        cr_assert_eq(read_file_at(dfd, "link", 1024, &s, &len), -ELOOP);
        cr_assert_str_eq(s, "untouched");
        cr_assert_eq(len, 42);
}

Test(fileio, write_replaces_symlink_not_target) {
        char path[PATH_MAX], *s = NULL;
        struct stat st;
        int ofd;

        ofd = open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(ofd, 0);
        write_plain(ofd, "victim", "original");
        snprintf(path, sizeof(path), "%s/victim", outside);
        cr_assert_eq(symlinkat(path, dfd, "f"), 0);

        cr_assert_eq(write_file_atomic_at(dfd, "f", "new", 3, 0600, 0), 0);

        cr_assert_eq(fstatat(dfd, "f", &st, AT_SYMLINK_NOFOLLOW), 0);
        cr_assert(S_ISREG(st.st_mode), "the symlink was written through");
        cr_assert_eq(read_file_at(ofd, "victim", 100, &s, NULL), 0);
        cr_assert_str_eq(s, "original");
        free(s);
        close(ofd);
}

/* Every fsync() of this process fails with EIO from now on: a write that
 * succeeds then did not sync, one that fails did. */
static void fail_every_fsync(void) {
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fsync, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(f), .filter = f };
        cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0, "seccomp: %s", strerror(errno));
}

Test(fileio, only_a_durable_write_syncs) {
        char *s = NULL;

        fail_every_fsync();
        cr_assert_eq(write_file_atomic_at(dfd, "f", "plain", 5, 0600, 0), 0);
        cr_assert_eq(write_file_atomic_at(dfd, "f", "durable", 7, 0600, WRITE_FILE_DURABLE), -EIO);
        /* Its content is in place all the same, whole; only not known durable. */
        cr_assert_eq(read_file_at(dfd, "f", 100, &s, NULL), 0);
        cr_assert_str_eq(s, "durable");
        free(s);
        cr_assert_eq(sync_file_at(dfd, "f"), -EIO);
        cr_assert_eq(sync_file_at(dfd, "missing"), -ENOENT);

        /* No temp file left behind by either. */
        DIR *d = fdopendir(dup(dfd));
        cr_assert_not_null(d);
        unsigned n = 0;
        for (struct dirent *de; (de = readdir(d));)
                n += de->d_name[0] != '.' || (de->d_name[1] != '\0' && de->d_name[1] != '.');
        closedir(d);
        cr_assert_eq(n, 1);
}

Test(fileio, durable_write_and_sync) {
        cr_assert_eq(write_file_atomic_at(dfd, "f", "x", 1, 0600, WRITE_FILE_DURABLE), 0);
        cr_assert_eq(sync_file_at(dfd, "f"), 0);
}

Test(fileio, read_refuses_non_regular) {
        char *s = NULL;

        cr_assert_eq(mkdirat(dfd, "dir", 0700), 0);
        cr_assert_eq(read_file_at(dfd, "dir", 1024, &s, NULL), -EISDIR);

        /* A FIFO without a writer must neither hang open() nor be read. */
        cr_assert_eq(mkfifoat(dfd, "fifo", 0600), 0);
        cr_assert_eq(read_file_at(dfd, "fifo", 1024, &s, NULL), -EBADFD);
        cr_assert_null(s);
}

Test(fileio, read_missing) {
        char *s = NULL;

        cr_assert_eq(read_file_at(dfd, "nope", 1024, &s, NULL), -ENOENT);
        cr_assert_null(s);
}

Test(fileio, size_limit) {
        char data[100], *s = NULL;
        size_t len = 42;

        memset(data, 'z', sizeof(data));
        cr_assert_eq(write_file_atomic_at(dfd, "f", data, sizeof(data), 0600, 0), 0);

        cr_assert_eq(read_file_at(dfd, "f", 99, &s, &len), -EFBIG);
        cr_assert_null(s);
        cr_assert_eq(len, 42);

        cr_assert_eq(read_file_at(dfd, "f", 100, &s, &len), 0);
        cr_assert_eq(len, 100);
        free(s);
}

Test(fileio, size_limit_on_proc_file) {
        /* /proc files report st_size 0: the limit must hold while reading. */
        char *s = NULL;
        size_t len = 0;

        cr_assert_eq(read_file_at(AT_FDCWD, "/proc/self/stat", 4096, &s, &len), 0);
        cr_assert_gt(len, 10);
        cr_assert_eq(strlen(s), len);
        free(s);

        s = NULL;
        cr_assert_eq(read_file_at(AT_FDCWD, "/proc/self/stat", 5, &s, NULL), -EFBIG);
        cr_assert_null(s);
}

Test(fileio, rm_rf_nested_does_not_follow_symlinks) {
        char path[PATH_MAX];
        struct stat st;
        int ofd;

        ofd = open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(ofd, 0);
        write_plain(ofd, "precious", "keep me");
        cr_assert_eq(mkdirat(ofd, "precious-dir", 0700), 0);
        write_plain(ofd, "precious-dir/inner", "keep me too");

        cr_assert_eq(mkdirat(dfd, "a", 0700), 0);
        cr_assert_eq(mkdirat(dfd, "a/b", 0700), 0);
        cr_assert_eq(mkdirat(dfd, "a/b/c", 0700), 0);
        cr_assert_eq(mkdirat(dfd, "a/empty", 0700), 0);
        write_plain(dfd, "a/top", "1");
        write_plain(dfd, "a/b/mid", "2");
        write_plain(dfd, "a/b/c/deep", "3");
        cr_assert_eq(mkfifoat(dfd, "a/b/fifo", 0600), 0);
        snprintf(path, sizeof(path), "%s/precious", outside);
        cr_assert_eq(symlinkat(path, dfd, "a/b/c/file-link"), 0);
        snprintf(path, sizeof(path), "%s/precious-dir", outside);
        cr_assert_eq(symlinkat(path, dfd, "a/b/dir-link"), 0);
        cr_assert_eq(symlinkat("/nonexistent", dfd, "a/dangling"), 0);

        cr_assert_eq(rm_rf_at(dfd, "a"), 0);

        cr_assert_eq(fstatat(dfd, "a", &st, AT_SYMLINK_NOFOLLOW), -1);
        cr_assert_eq(errno, ENOENT);
        cr_assert_eq(count_entries(dfd), 0);

        cr_assert_eq(fstatat(ofd, "precious", &st, 0), 0, "symlinked file was removed");
        cr_assert_eq(fstatat(ofd, "precious-dir/inner", &st, 0), 0, "symlinked directory was emptied");
        close(ofd);
}

Test(fileio, rm_rf_symlink_itself) {
        char path[PATH_MAX];
        struct stat st;

        cr_assert_eq(mkdirat(dfd, "real", 0700), 0);
        write_plain(dfd, "real/file", "x");
        snprintf(path, sizeof(path), "%s/real", tmpdir);
        cr_assert_eq(symlinkat(path, dfd, "link"), 0);

        cr_assert_eq(rm_rf_at(dfd, "link"), 0);
        cr_assert_eq(fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW), -1);
        cr_assert_eq(fstatat(dfd, "real/file", &st, 0), 0, "followed the symlink");
}

Test(fileio, rm_rf_missing_and_plain_file) {
        struct stat st;

        cr_assert_eq(rm_rf_at(dfd, "does-not-exist"), 0);

        write_plain(dfd, "plain", "x");
        cr_assert_eq(rm_rf_at(dfd, "plain"), 0);
        cr_assert_eq(fstatat(dfd, "plain", &st, AT_SYMLINK_NOFOLLOW), -1);

        cr_assert_eq(rm_rf_at(dfd, "."), -EINVAL);
        cr_assert_eq(rm_rf_at(dfd, ""), -EINVAL);
}
