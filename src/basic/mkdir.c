/* SPDX-License-Identifier: MIT */
#include <sys/stat.h>

#include "macro.h"
#include "mkdir.h"

/* Each prefix of path that ends before a '/', then path itself if
 * with_last; an existing one is fine (a prefix that is no directory makes
 * the next mkdir fail with ENOTDIR; the last is checked). */
static int make(const char *path, mode_t mode, bool with_last) {
        if (!path[0])
                return -EINVAL;
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                if (slash[-1] == '/') /* "a//b": that prefix was made already */
                        continue;
                *slash = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *slash = '/';
        }
        if (!with_last || mkdir(p, mode) >= 0)
                return 0;
        if (errno != EEXIST)
                return negative_errno();
        struct stat st;
        if (stat(p, &st) < 0)
                return negative_errno();
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int mkdir_p(const char *path, mode_t mode) {
        return make(path, mode, true);
}

int mkdir_parents(const char *path, mode_t mode) {
        return make(path, mode, false);
}
