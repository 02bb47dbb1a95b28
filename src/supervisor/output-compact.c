/* SPDX-License-Identifier: MIT */

/* The end of a job's output that went past OutputMaxBytes=: its head,
 * one marker line and its tail put in order in one file, as OpenOutput
 * hands it out. */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "output-relay-internal.h"
#include "output-store.h"

static int copy_range(int from, uint64_t from_off, int to, uint64_t to_off, uint64_t len) {
        loff_t in = (loff_t) from_off, out = (loff_t) to_off;
        while (len > 0) {
                ssize_t n = copy_file_range(from, &in, to, &out, (size_t) MIN(len, UINT64_C(1) << 30), 0);
                if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
                        break; /* the plain way below */
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -EIO; /* the source is shorter than its layout says */
                len -= (uint64_t) n;
        }
        uint8_t buf[64 * 1024];
        while (len > 0) {
                ssize_t n = pread(from, buf, (size_t) MIN(len, sizeof buf), in);
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -EIO;
                ssize_t w = pwrite(to, buf, (size_t) n, out);
                if (w < 0)
                        return negative_errno();
                if (w != n)
                        return -EIO;
                in += n, out += n, len -= (uint64_t) n;
        }
        return 0;
}

/* head + marker + tail into `output.new`. */
static int write_compacted(OutputRelay *r, int fd) {
        const OutputLayout *l = &r->layout;
        char marker[OUTPUT_MARKER_MAX];
        size_t m = output_marker(output_layout_dropped(l), marker);

        int k = copy_range(r->output_fd, 0, fd, 0, l->head);
        if (k < 0)
                return k;
        if (m > 0 && pwrite(fd, marker, m, (off_t) l->head) != (ssize_t) m)
                return errno > 0 ? negative_errno() : -EIO;
        uint64_t pos = l->head + m;
        for (uint64_t at = l->tail_start; at < l->total;) {
                OutputExtent e;
                output_layout_map(l, at, l->total - at, &e);
                if (e.length == 0 || e.start != at)
                        return -EBADMSG; /* cannot be: the tail is whole */
                k = copy_range(e.file == OUTPUT_FILE_RING ? r->tail_fd : r->output_fd, e.offset, fd, pos, e.length);
                if (k < 0)
                        return k;
                pos += e.length;
                at += e.length;
        }
        return fsync(fd) < 0 ? negative_errno() : 0;
}

/* RING → COMPACTED: the kept output in one file, in order, as OpenOutput
 * hands it out. A new file renamed over `output`, so that a reader that
 * follows the old one never reads a byte that moved. */
void output_relay_compact(OutputRelay *r) {
        OutputLayout c;
        uint64_t size = output_layout_compacted_size(&r->layout);
        char a[32];
        struct statvfs sv;
        int k;

        if (fstatvfs(r->output_fd, &sv) >= 0) {
                uint64_t free_bytes = (uint64_t) sv.f_bavail * sv.f_frsize;
                if (free_bytes < size || free_bytes - size < r->keep_free) {
                        log_warning("Job %s: no room to put its output in order (%s); "
                                    "it stays as it is, readable through ReadOutput",
                                    r->job_id, output_format_size(a, sizeof a, size));
                        return;
                }
        }

        (void) unlinkat(r->dir_fd, JOB_OUTPUT_NEW_FILE, 0);
        _cleanup_close_ int fd = openat(r->dir_fd, JOB_OUTPUT_NEW_FILE,
                                        O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                log_warning_errno(negative_errno(), "Job %s: cannot put its output in order: %m", r->job_id);
                return;
        }
        struct stat st;
        k = write_compacted(r, fd);
        if (k >= 0 && fstat(fd, &st) < 0)
                k = negative_errno();
        if (k < 0) {
                log_warning_errno(k, "Job %s: cannot put its output in order: %m", r->job_id);
                (void) unlinkat(r->dir_fd, JOB_OUTPUT_NEW_FILE, 0);
                return;
        }

        /* The state names the new file before it is `output`: a reader in
         * between finds it as output.new (output-store.c). */
        output_layout_compacted(&r->layout, &c);
        uint64_t ino = (uint64_t) st.st_ino;
        k = output_state_store(r->state_fd, &c, ino);
        if (k >= 0 && fsync(r->state_fd) < 0)
                k = negative_errno();
        if (k < 0) {
                log_warning_errno(k, "Job %s: cannot record its output in order: %m", r->job_id);
                /* The state may name output.new already (a store that went
                 * through, or half of it): it goes only once the state names
                 * the ring again, or else readers would find neither. */
                if (output_state_store(r->state_fd, &r->known, r->output_ino) >= 0)
                        (void) unlinkat(r->dir_fd, JOB_OUTPUT_NEW_FILE, 0);
                return;
        }
        if (renameat(r->dir_fd, JOB_OUTPUT_NEW_FILE, r->dir_fd, JOB_OUTPUT_FILE) < 0) {
                /* Readers find it as output.new, as the state says. */
                log_warning_errno(negative_errno(), "Job %s: cannot rename its output in order: %m", r->job_id);
                return;
        }
        (void) fsync(r->dir_fd);
        (void) unlinkat(r->dir_fd, JOB_OUTPUT_TAIL_FILE, 0);
        r->tail_fd = safe_close(r->tail_fd);
        safe_close(r->output_fd);
        r->output_fd = TAKE_FD(fd);
        r->output_ino = ino;
        r->layout = r->known = c;
}

