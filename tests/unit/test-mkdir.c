/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"
#include "mkdir.h"

static char dir[] = "/tmp/bgrun-test-mkdir.XXXXXX";

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
        rm_rf_at(AT_FDCWD, dir);
}

TestSuite(mkdir, .init = setup, .fini = teardown);

static char *at(const char *rel) {
        char *p = NULL;
        cr_assert_geq(asprintf(&p, "%s/%s", dir, rel), 0);
        return p;
}

static mode_t mode_of(const char *rel) {
        _cleanup_free_ char *p = at(rel);
        struct stat st;
        cr_assert_eq(stat(p, &st), 0, "%s exists", rel);
        cr_assert(S_ISDIR(st.st_mode), "%s is a directory", rel);
        return st.st_mode & 07777;
}

static bool exists(const char *rel) {
        _cleanup_free_ char *p = at(rel);
        return access(p, F_OK) == 0;
}

Test(mkdir, p_makes_every_missing_directory_with_the_mode) {
        mode_t old = umask(0);
        _cleanup_free_ char *p = at("a/b/c");
        cr_assert_eq(mkdir_p(p, 0700), 0);
        cr_assert_eq(mode_of("a"), 0700);
        cr_assert_eq(mode_of("a/b"), 0700);
        cr_assert_eq(mode_of("a/b/c"), 0700);
        cr_assert_eq(mkdir_p(p, 0755), 0, "existing is fine");
        cr_assert_eq(mode_of("a/b/c"), 0700, "and left as it is");
        umask(old);
}

Test(mkdir, parents_makes_all_but_the_last) {
        mode_t old = umask(0);
        _cleanup_free_ char *p = at("x/y/socket");
        cr_assert_eq(mkdir_parents(p, 0755), 0);
        cr_assert_eq(mode_of("x"), 0755);
        cr_assert_eq(mode_of("x/y"), 0755);
        cr_assert_not(exists("x/y/socket"));
        cr_assert_eq(mkdir_parents(p, 0755), 0, "existing is fine");
        umask(old);
}

Test(mkdir, doubled_and_trailing_slashes) {
        _cleanup_free_ char *p = at("d//e/");
        cr_assert_eq(mkdir_p(p, 0755), 0);
        mode_of("d/e");
}

Test(mkdir, a_file_in_the_way_is_not_a_directory) {
        _cleanup_free_ char *f = at("file");
        _cleanup_close_ int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(mkdir_p(f, 0755), -ENOTDIR);
        _cleanup_free_ char *below = at("file/sub/x");
        cr_assert_eq(mkdir_p(below, 0755), -ENOTDIR);
        cr_assert_eq(mkdir_parents(below, 0755), -ENOTDIR);
        cr_assert_eq(mkdir_p("", 0755), -EINVAL);
}
