/* SPDX-License-Identifier: MIT */
#pragma once

/* Ownership helpers in the style of systemd: resources are released by
 * cleanup attributes, and handed on explicitly with TAKE_PTR/TAKE_FD. */

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void closep(int *fd) {
        *fd = safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)          \
        static inline void func##p(type *p) {            \
                if (*p)                                  \
                        func(*p);                        \
        }

#define TAKE_PTR(p)                       \
        ({                                \
                __typeof__(p) _ptr_ = (p); \
                (p) = NULL;               \
                _ptr_;                    \
        })
/* Move a struct out, leaving it zeroed (so its cleanup frees nothing). */
#define TAKE_STRUCT(s)                     \
        ({                                 \
                __typeof__(s) _s_ = (s);   \
                (s) = (__typeof__(s)) {};  \
                _s_;                       \
        })
#define TAKE_FD(fd)                \
        ({                         \
                int _fd_ = (fd);   \
                (fd) = -EBADF;     \
                _fd_;              \
        })

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#define streq(a, b) (strcmp((a), (b)) == 0)
#define startswith_s(s, prefix) (strncmp((s), (prefix), strlen(prefix)) == 0)

/* errno as a negative return value; never 0, so a caller never mistakes a
 * failure for success when a libc call forgot to set errno. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

/* No uid at all (what -1 is to setresuid()). */
#define UID_INVALID ((uid_t) -1)

#define USEC_PER_SEC ((uint64_t) 1000000ULL)
#define USEC_PER_MSEC ((uint64_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)
