/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "output-store.h"

/* How often a reader starts over when the supervisor changed the layout
 * under it. Layout changes are rare (freeze, compaction, a free-space
 * change); only a ring far smaller than a read, overwritten faster than it
 * is read, makes a reader give up, and then it reads nothing this time. */
#define READ_ATTEMPTS 32
/* How often to read a state that looks torn before calling it bad. */
#define STATE_ATTEMPTS 16

static int open_file(int dir_fd, const char *name, int *ret_fd) {
        int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int output_state_load(int state_fd, OutputLayout *ret, uint64_t *ret_output_ino) {
        uint8_t buf[OUTPUT_STATE_SIZE];
        int r = -EBADMSG;
        for (int i = 0; i < STATE_ATTEMPTS; i++) {
                ssize_t n = pread(state_fd, buf, sizeof buf, 0);
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -ENODATA;
                r = output_state_decode(buf, (size_t) n, ret, ret_output_ino);
                if (r >= 0)
                        return 0;
                /* Torn by a pwrite in flight: it is one syscall, read again. */
                sched_yield();
        }
        return r;
}

int output_state_store(int state_fd, const OutputLayout *l, uint64_t output_ino) {
        uint8_t buf[OUTPUT_STATE_SIZE];
        output_state_encode(l, output_ino, buf);
        ssize_t n = pwrite(state_fd, buf, sizeof buf, 0);
        if (n < 0)
                return negative_errno();
        return n == (ssize_t) sizeof buf ? 0 : -EIO;
}

/* The state, if any: 0 with it, -ENODATA for none (LINEAR). */
static int load_state_at(int dir_fd, OutputLayout *ret, uint64_t *ret_ino) {
        _cleanup_close_ int fd = -EBADF;
        int r = open_file(dir_fd, JOB_OUTPUT_STATE_FILE, &fd);
        if (r == -ENOENT)
                return -ENODATA;
        if (r < 0)
                return r;
        return output_state_load(fd, ret, ret_ino);
}

static int linear_layout(int output_fd, OutputLayout *ret) {
        struct stat st;
        if (fstat(output_fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        /* The cap does not matter for reading a LINEAR layout. */
        output_layout_init(ret, UINT64_MAX);
        ret->total = ret->head = ret->tail_start = (uint64_t) st.st_size;
        return 0;
}

int output_store_layout(int dir_fd, OutputLayout *ret) {
        int r = load_state_at(dir_fd, ret, NULL);
        if (r != -ENODATA)
                return r;
        _cleanup_close_ int fd = -EBADF;
        r = open_file(dir_fd, "output", &fd);
        return r < 0 ? r : linear_layout(fd, ret);
}

/* `output` as the state describes it: the file of inode ino, which is
 * `output`, or `output.new` in the moment before the supervisor renames
 * it. -ESTALE if neither is (the state changed meanwhile: read it again). */
static int open_output_of(int dir_fd, uint64_t ino, int *ret_fd) {
        static const char *const names[] = { "output", JOB_OUTPUT_NEW_FILE };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat st;
                int r = open_file(dir_fd, names[i], &fd);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (fstat(fd, &st) < 0)
                        return negative_errno();
                if ((uint64_t) st.st_ino == ino) {
                        *ret_fd = TAKE_FD(fd);
                        return 0;
                }
        }
        return -ESTALE;
}

static int same_state(int dir_fd, const OutputLayout *was, bool had_state, OutputLayout *ret_now) {
        int r = load_state_at(dir_fd, ret_now, NULL);
        if (r == -ENODATA)
                return !had_state;
        if (r < 0)
                return r;
        return had_state && ret_now->phase == was->phase && ret_now->generation == was->generation;
}

/* One attempt: 1 with the bytes read, 0 to start over. */
static int read_attempt(int dir_fd, uint64_t offset, uint8_t *buf, size_t max, uint64_t *ret_start, size_t *ret_n,
                        uint64_t *ret_total) {
        OutputLayout l, now;
        uint64_t ino = 0;
        _cleanup_close_ int main_fd = -EBADF, ring_fd = -EBADF;
        int r;

        r = load_state_at(dir_fd, &l, &ino);
        bool had_state = r >= 0;
        if (r == -ENODATA) {
                r = open_file(dir_fd, "output", &main_fd);
                if (r >= 0)
                        r = linear_layout(main_fd, &l);
        } else if (r >= 0) {
                r = open_output_of(dir_fd, ino, &main_fd);
                if (r == -ESTALE)
                        return 0;
                if (r >= 0 && l.phase == OUTPUT_RING) {
                        r = open_file(dir_fd, JOB_OUTPUT_TAIL_FILE, &ring_fd);
                        if (r == -ENOENT) /* not made yet: nothing is in it */
                                r = 0;
                }
        }
        if (r < 0)
                return r;

        /* The first piece says where the bytes start; the rest follow it
         * only where they are contiguous and in the same file: never across
         * the gap, and never from `output` on into the ring, whose bytes
         * alone can be replaced while they are read. */
        OutputExtent e;
        output_layout_map(&l, offset, max, &e);
        uint64_t start = e.start;
        OutputFile file = e.file;
        size_t n = 0;
        while (e.length > 0 && e.start == start + n && e.file == file) {
                int fd = e.file == OUTPUT_FILE_RING ? ring_fd : main_fd;
                ssize_t k = fd >= 0 ? pread(fd, buf + n, (size_t) e.length, (off_t) e.offset) : 0;
                if (k < 0)
                        return negative_errno();
                n += (size_t) k;
                if ((uint64_t) k < e.length || n >= max)
                        break; /* shortened meanwhile: the second look tells */
                output_layout_map(&l, start + n, max - n, &e);
        }

        r = same_state(dir_fd, &l, had_state, &now);
        if (r <= 0)
                return r;

        if (file == OUTPUT_FILE_RING && now.tail_start > start) {
                /* The ring overran the first bytes while they were read:
                 * only what the supervisor had not replaced yet counts (it
                 * publishes the tail's start before it overwrites), and it
                 * follows offset just as a read in the gap does. `output`
                 * is never overwritten, only shortened. */
                uint64_t skip = now.tail_start - start;
                if (skip >= n)
                        return 0;
                memmove(buf, buf + skip, n - (size_t) skip);
                n -= (size_t) skip;
                start = now.tail_start;
        }
        *ret_start = start;
        *ret_n = n;
        *ret_total = had_state ? now.total : l.total;
        return 1;
}

int output_store_read(int dir_fd, uint64_t offset, void *buf, size_t max, uint64_t *ret_start, size_t *ret_n,
                      uint64_t *ret_total) {
        for (int i = 0; i < READ_ATTEMPTS; i++) {
                int r = read_attempt(dir_fd, offset, buf, max, ret_start, ret_n, ret_total);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        /* Overrun every time: nothing this time, and where the tail now
         * starts, so the reader goes on from there. */
        OutputLayout l;
        int r = output_store_layout(dir_fd, &l);
        if (r < 0)
                return r;
        *ret_start = offset < l.head ? offset : (offset > l.tail_start ? offset : l.tail_start);
        *ret_n = 0;
        *ret_total = l.total;
        return 0;
}

int output_store_open_kept(int dir_fd, int *ret_fd, OutputLayout *ret_layout) {
        for (int i = 0; i < READ_ATTEMPTS; i++) {
                OutputLayout l, now;
                uint64_t ino = 0;
                _cleanup_close_ int fd = -EBADF;
                int r = load_state_at(dir_fd, &l, &ino);
                bool had_state = r >= 0;
                if (r == -ENODATA)
                        r = open_file(dir_fd, "output", &fd);
                else if (r >= 0) {
                        if (l.phase != OUTPUT_COMPACTED)
                                return -EOPNOTSUPP;
                        r = open_output_of(dir_fd, ino, &fd);
                        if (r == -ESTALE)
                                continue;
                }
                if (r < 0)
                        return r;
                if (!had_state) {
                        r = linear_layout(fd, &l);
                        if (r < 0)
                                return r;
                }
                /* A state that appeared meanwhile may mean this `output` is
                 * already the compacted one: look again. */
                r = same_state(dir_fd, &l, had_state, &now);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                *ret_fd = TAKE_FD(fd);
                if (ret_layout)
                        *ret_layout = l;
                return 0;
        }
        return -EAGAIN;
}

/* The files that hold output bytes. */
static const char *const output_files[] = { "output", JOB_OUTPUT_TAIL_FILE, JOB_OUTPUT_NEW_FILE };

int output_store_disk_size(int dir_fd, uint64_t *ret) {
        uint64_t sum = 0;
        for (size_t i = 0; i < ELEMENTSOF(output_files); i++) {
                struct stat st;
                if (fstatat(dir_fd, output_files[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return negative_errno();
                }
                sum += (uint64_t) st.st_size;
        }
        *ret = sum;
        return 0;
}

void output_store_release(int dir_fd) {
        for (size_t i = 0; i < ELEMENTSOF(output_files); i++) {
                _cleanup_close_ int fd = openat(dir_fd, output_files[i],
                                                O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                struct stat st;
                if (fd >= 0 && fstat(fd, &st) >= 0 && S_ISREG(st.st_mode))
                        (void) !ftruncate(fd, 0);
        }
}
