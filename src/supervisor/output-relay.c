/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "output-relay.h"
#include "output-store.h"
#include "time-util.h"

/* A pipe starts at the kernel's default (64 KiB). Pipe buffers count
 * against pipe-user-pages-soft (64 MiB) for uid 0 as a whole, every job of
 * every user (the supervisor has no CAP_SYS_RESOURCE), and once that is
 * used up every new pipe of a supervisor gets 2 pages: so only a job that
 * writes a lot gets a larger one, for fewer wakeups per byte, and not much
 * larger (128 such jobs at once before the limit). Measured, 1 GiB in 8 KiB
 * writes into tmpfs: 1 MiB ~1100 MiB/s, 512 KiB ~980, 256 KiB ~800 (with
 * the hold below scaled to it). */
#define PIPE_SIZE_LARGE (UINT64_C(512) << 10)
#define PIPE_GROW_AFTER (UINT64_C(1) << 20)
/* A job that writes a lot in small writes would wake us for every few
 * KiB, and each wakeup costs it and us more than the bytes: once we drained
 * the pipe well before it was half full, leave it alone this long (it
 * holds 512 KiB: a writer faster than 3 GB/s waits for us a little). Jobs
 * that wrote less than PIPE_GROW_AFTER get every byte at once. */
#define HOLD_USEC UINT64_C(150)
/* How often free space is looked at while output grows a file: every
 * 1/SPACE_CHECK_SHARE of what is left above KeepFree= (every job may write
 * that much between two looks), between SPACE_CHECK_MIN_BYTES and
 * SPACE_CHECK_BYTES, or every SPACE_CHECK_USEC; but not before a job wrote
 * SPACE_CHECK_MIN_BYTES since the last look. A few lines of output get
 * through below KeepFree= as records do (they are as small); what fills a
 * disk is a job that writes a lot, and that is looked at. */
#define SPACE_CHECK_BYTES (UINT64_C(4) << 20)
#define SPACE_CHECK_USEC (100 * USEC_PER_MSEC)
#define SPACE_CHECK_MIN_BYTES (UINT64_C(64) << 10)
#define SPACE_CHECK_SHARE 64

#define SPLICE_FLAGS (SPLICE_F_MOVE | SPLICE_F_NONBLOCK)

/* At its disk limit, the pipe waits this long for bgrund's answer, looking
 * every DISK_HOLD_USEC (a job that writes faster than the answer comes is
 * slowed, not cut); past it (no bgrund to answer), the files grow no more
 * until an answer comes. With no room, bgrund is asked again every
 * DISK_ASK_AGAIN_USEC while output comes. */
#define DISK_WAIT_USEC (2 * USEC_PER_SEC)
#define DISK_HOLD_USEC (2 * USEC_PER_MSEC)
#define DISK_ASK_AGAIN_USEC USEC_PER_SEC

static char *format_size(char *buf, size_t len, uint64_t bytes) {
        if (bytes >= (UINT64_C(1) << 20))
                snprintf(buf, len, "%.1fM", (double) bytes / (1 << 20));
        else
                snprintf(buf, len, "%" PRIu64 "B", bytes);
        return buf;
}

static void reserve_state(OutputRelay *r);

void output_relay_done(OutputRelay *r) {
        r->pipe_fd = safe_close(r->pipe_fd);
        r->output_fd = safe_close(r->output_fd);
        r->tail_fd = safe_close(r->tail_fd);
        r->state_fd = safe_close(r->state_fd);
        r->null_fd = safe_close(r->null_fd);
}

int output_relay_open(OutputRelay *r, int dir_fd, const JobSpec *spec, int *ret_write_fd, const char **ret_step) {
        struct stat st;

        r->dir_fd = dir_fd;
        snprintf(r->job_id, sizeof r->job_id, "%s", spec->id);
        r->keep_free = spec->keep_free;
        output_layout_init(&r->layout, spec->output_max_bytes);
        r->known = r->layout;

        *ret_step = "open the output file";
        r->output_fd = openat(dir_fd, JOB_OUTPUT_FILE, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                              0600);
        if (r->output_fd < 0)
                return negative_errno();
        if (fstat(r->output_fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        r->output_ino = (uint64_t) st.st_ino;
        /* Nothing may describe another `output` than this one. */
        (void) unlinkat(dir_fd, JOB_OUTPUT_STATE_FILE, 0);
        (void) unlinkat(dir_fd, JOB_OUTPUT_TAIL_FILE, 0);
        (void) unlinkat(dir_fd, JOB_OUTPUT_NEW_FILE, 0);
        reserve_state(r);

        r->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (r->null_fd < 0)
                return negative_errno();

        *ret_step = "make the output pipe";
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        r->pipe_fd = p[0];
        /* Only our end: the command's writes block as they would on any
         * pipe, which is how a job that outruns its disk is slowed. */
        if (fcntl(r->pipe_fd, F_SETFL, O_NONBLOCK) < 0) {
                int k = negative_errno();
                safe_close(p[1]);
                return k;
        }
        int size = fcntl(r->pipe_fd, F_GETPIPE_SZ);
        r->pipe_size = size > 0 ? (uint64_t) size : 65536;
        *ret_write_fd = p[1];
        return 0;
}

/* --- the state, as readers know it ------------------------------------- */

/* The state file, empty (LINEAR to readers) but with its block: publishing
 * a layout then never needs room, so running out of room can always be
 * told, and told again when room is back. Without it (no room even for
 * that, or no fallocate() there), publish() makes it when first needed. */
static void reserve_state(OutputRelay *r) {
        r->state_fd = openat(r->dir_fd, JOB_OUTPUT_STATE_FILE, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             0600);
        if (r->state_fd < 0) {
                log_debug_errno(negative_errno(), "Job %s: cannot make its output state file yet: %m", r->job_id);
                return;
        }
        if (fallocate(r->state_fd, FALLOC_FL_KEEP_SIZE, 0, OUTPUT_STATE_SIZE) < 0)
                log_debug_errno(negative_errno(), "Job %s: cannot reserve room for its output state: %m",
                                r->job_id);
}

/* A job that never left LINEAR has no state file when it ended. */
static void drop_unused_state(OutputRelay *r) {
        if (r->state_fd < 0 || r->known.phase != OUTPUT_LINEAR)
                return;
        (void) unlinkat(r->dir_fd, JOB_OUTPUT_STATE_FILE, 0);
        r->state_fd = safe_close(r->state_fd);
}

/* what: "record where its output is", "write its output" */
static void go_blind(OutputRelay *r, int error, const char *what) {
        if (!r->blind)
                log_warning_errno(error, "Job %s: cannot %s (%m); it is dropped from here on, and counted",
                                  r->job_id, what);
        r->blind = true;
        /* Readers know only what was published (or `output`, while LINEAR):
         * nothing of it may change from now on. */
        r->layout = r->known;
}

static int publish(OutputRelay *r, const OutputLayout *l) {
        if (r->blind)
                return -EROFS;
        if (r->state_fd < 0) {
                r->state_fd = openat(r->dir_fd, JOB_OUTPUT_STATE_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (r->state_fd < 0) {
                        int k = negative_errno();
                        go_blind(r, k, "record where its output is");
                        return k;
                }
        }
        int k = output_state_store(r->state_fd, l, r->output_ino);
        if (k < 0) {
                go_blind(r, k, "record where its output is");
                return k;
        }
        r->known = *l;
        return 0;
}

/* --- free space (KeepFree=) ----------------------------------------------- */

static void note_low(OutputRelay *r, uint64_t free_bytes) {
        char a[32], b[32];
        if (r->warned_low)
                return;
        r->warned_low = true;
        log_warning("Job %s: %s free on the state filesystem, below KeepFree=%s: its output is no "
                    "longer kept while free space stays this low (what is dropped is counted)",
                    r->job_id, format_size(a, sizeof a, free_bytes), format_size(b, sizeof b, r->keep_free));
}

static void space_low(OutputRelay *r) {
        if (output_layout_low_space(&r->layout))
                (void) publish(r, &r->layout);
}

static void truncate_file(OutputRelay *r, int fd, uint64_t size, const char *name) {
        if (fd >= 0 && ftruncate(fd, (off_t) size) < 0)
                log_debug_errno(negative_errno(), "Job %s: cannot shorten %s: %m", r->job_id, name);
}

/* The layout changed such that the ring's bytes are kept no more (it
 * starts over, or ended) and maybe `output`'s past the head neither: now
 * that readers know, give their room back. */
static void give_room_back(OutputRelay *r, bool ring, bool reclaim) {
        if (ring)
                truncate_file(r, r->tail_fd, 0, JOB_OUTPUT_TAIL_FILE);
        if (reclaim)
                truncate_file(r, r->output_fd, r->layout.head, JOB_OUTPUT_FILE);
}

static void space_back(OutputRelay *r);

/* The files grow no more while free space is low or the owner's budget is
 * used up: a change of either that changes that moves the layout. */
static void set_short(OutputRelay *r, bool *flag, bool value) {
        bool before = r->low || r->over_budget;
        *flag = value;
        bool after = r->low || r->over_budget;
        if (before == after)
                return;
        if (after)
                space_low(r);
        else
                space_back(r);
}

static void space_back(OutputRelay *r) {
        bool reclaim;
        if (!output_layout_space_back(&r->layout, &reclaim))
                return;
        if (publish(r, &r->layout) < 0)
                return;
        /* A ring that starts over, from position 0, holds nothing kept. */
        give_room_back(r, r->layout.ring_origin == r->layout.total, reclaim);
}

static uint64_t space_check_interval(uint64_t free_bytes, uint64_t keep_free) {
        uint64_t margin = free_bytes > keep_free ? free_bytes - keep_free : 0;
        uint64_t n = margin / SPACE_CHECK_SHARE;
        return n < SPACE_CHECK_MIN_BYTES ? SPACE_CHECK_MIN_BYTES : MIN(n, SPACE_CHECK_BYTES);
}

/* Not on every write: the closer free space is to KeepFree=, the sooner. */
static void check_space(OutputRelay *r) {
        if (r->blind || r->broken || (r->keep_free == 0 && !r->low) || !output_layout_needs_space(&r->layout))
                return;
        uint64_t since = r->layout.total - r->checked_total, now = now_monotonic_usec();
        if (since < SPACE_CHECK_MIN_BYTES ||
            (since < r->check_interval && now - r->checked_usec < SPACE_CHECK_USEC))
                return;
        r->checked_total = r->layout.total;
        r->checked_usec = now;

        struct statvfs sv;
        if (fstatvfs(r->output_fd, &sv) < 0)
                return;
        uint64_t free_bytes = (uint64_t) sv.f_bavail * sv.f_frsize;
        r->check_interval = space_check_interval(free_bytes, r->keep_free);
        bool low = free_bytes < r->keep_free;
        if (low == r->low)
                return;
        if (low)
                note_low(r, free_bytes);
        set_short(r, &r->low, low);
}

/* --- the owner's budget (OutputMaxBytesPerUser=) -------------------------- */

uint64_t output_relay_disk_used(const OutputRelay *r) {
        const OutputLayout *l = &r->layout;
        if (l->phase != OUTPUT_RING)
                return l->head;
        /* `output` up to frozen, and the ring file as far as it was written. */
        return l->frozen + MIN(l->total - MIN(l->ring_origin, l->total), l->ring_size);
}

void output_relay_set_disk_limit(OutputRelay *r, uint64_t limit) {
        char a[32];
        r->disk_limit = limit;
        r->disk_asked = false;
        r->disk_waiting_since = 0;
        r->hold_until = 0;
        bool room = limit > output_relay_disk_used(r);
        if (room == !r->over_budget)
                return;
        if (!room)
                log_warning("Job %s: its owner's OutputMaxBytesPerUser= is used up: its output past %s is no longer "
                            "kept while it stays so (what is dropped is counted)",
                            r->job_id, format_size(a, sizeof a, output_relay_disk_used(r)));
        set_short(r, &r->over_budget, !room);
}

void output_relay_disk_reported(OutputRelay *r) {
        r->disk_report_due = false;
        r->disk_reported_usec = now_monotonic_usec();
}

/* Whether the next bytes may go on now, at most *avail of them growing the
 * files: the limit is asked to move half a window ahead of it; at it, the
 * pipe waits for the answer (false), until DISK_WAIT_USEC says nobody will
 * answer and the files grow no more. */
static bool check_budget(OutputRelay *r, uint64_t *avail) {
        if (r->blind || r->broken || !output_layout_needs_space(&r->layout))
                return true;
        uint64_t used = output_relay_disk_used(r), now = now_monotonic_usec();
        if (r->over_budget) {
                if (now - r->disk_reported_usec >= DISK_ASK_AGAIN_USEC)
                        r->disk_report_due = true;
                return true;
        }
        if (!r->disk_asked && used + SUPERVISOR_DISK_WINDOW / 2 >= r->disk_limit) {
                r->disk_asked = true;
                r->disk_report_due = true;
        }
        if (used < r->disk_limit) {
                r->disk_waiting_since = 0;
                *avail = MIN(*avail, r->disk_limit - used);
                return true;
        }
        if (r->disk_waiting_since == 0)
                r->disk_waiting_since = now;
        /* After the job's end nobody answers any more (the control socket is
         * closed): what is left is dropped, and counted, not waited for. */
        if (!r->finishing && now - r->disk_waiting_since < DISK_WAIT_USEC) {
                r->hold_until = now + DISK_HOLD_USEC;
                return false;
        }
        if (!r->finishing)
                log_warning("Job %s: bgrund did not answer for its disk budget: its output is no longer kept until it "
                            "does (what is dropped is counted)", r->job_id);
        set_short(r, &r->over_budget, true);
        r->disk_report_due = true;
        return true;
}

/* A write to a file failed, not the pipe: the filesystem has no room (or
 * is broken, which may pass). */
static bool is_room_error(int error) {
        return error == -ENOSPC || error == -EDQUOT || error == -EFBIG || error == -EIO || error == -EROFS;
}

/* A write failed for want of room (ENOSPC, EDQUOT, …): as if free space had
 * gone below KeepFree= just now. */
static void room_ran_out(OutputRelay *r, int error) {
        if (!r->warned_low)
                log_warning_errno(error, "Job %s: cannot write its output (%m): it is no longer kept while "
                                         "there is no room (what is dropped is counted)", r->job_id);
        r->warned_low = true;
        r->low = true;
        r->checked_total = r->layout.total;
        r->checked_usec = now_monotonic_usec();
        r->check_interval = 0;
        if (output_layout_low_space(&r->layout)) {
                (void) publish(r, &r->layout);
                return;
        }
        if (r->layout.phase != OUTPUT_RING) {
                go_blind(r, error, "write its output");
                return;
        }
        /* A full ring that cannot be overwritten either (a copy-on-write
         * filesystem): the tail ends, output is dropped until there is
         * room again. */
        bool reclaim = output_layout_end_ring(&r->layout);
        if (publish(r, &r->layout) >= 0)
                give_room_back(r, true, reclaim);
}

/* A write to an output file failed: for want of room, dropped while there
 * is none; for anything else (a filesystem that cannot splice, EPERM,
 * EMFILE, ENOMEM, …), dropped from now on. Either way counted in the
 * layout (readers see the gap, compaction writes its marker), and the pipe
 * drained: never the job held up by its output. */
static void file_failed(OutputRelay *r, int error) {
        if (is_room_error(error)) {
                room_ran_out(r, error);
                return;
        }
        if (!r->broken)
                log_warning_errno(error, "Job %s: cannot write its output (%m): it is dropped from here on, "
                                         "and counted", r->job_id);
        r->broken = true;
        bool reclaim = false;
        if (r->layout.phase == OUTPUT_LINEAR)
                (void) output_layout_low_space(&r->layout); /* `output` as it is, then nothing */
        else
                reclaim = output_layout_end_ring(&r->layout);
        if (publish(r, &r->layout) >= 0)
                give_room_back(r, true, reclaim);
}

/* --- relaying -------------------------------------------------------------- */

static void freeze(OutputRelay *r) {
        output_layout_freeze(&r->layout);
        (void) publish(r, &r->layout);
}

static ssize_t splice_to(OutputRelay *r, int fd, loff_t *off, uint64_t len) {
        ssize_t n = splice(r->pipe_fd, NULL, fd, off, (size_t) len, SPLICE_FLAGS);
        return n < 0 ? negative_errno() : n;
}

/* Move up to step->length bytes as the step says: > 0 moved, 0 at EOF, or
 * -errno. */
static ssize_t do_step(OutputRelay *r, const OutputStep *step) {
        loff_t off = (loff_t) step->offset;
        switch (step->kind) {
        case OUTPUT_STEP_LINEAR:
                return splice_to(r, r->output_fd, &off, step->length);
        case OUTPUT_STEP_RING:
                if (r->tail_fd < 0) {
                        r->tail_fd = openat(r->dir_fd, JOB_OUTPUT_TAIL_FILE,
                                            O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                        if (r->tail_fd < 0)
                                return negative_errno();
                }
                if (step->tail_start > r->known.tail_start) {
                        /* These bytes replace older ones: readers learn that
                         * before it happens. */
                        OutputLayout pre = r->layout;
                        pre.tail_start = step->tail_start;
                        if (publish(r, &pre) < 0)
                                return -ECANCELED; /* blind now: go round, and drop */
                }
                return splice_to(r, r->tail_fd, &off, step->length);
        case OUTPUT_STEP_DROP:
        default:
                return splice_to(r, r->null_fd, NULL, step->length);
        }
}

static void account(OutputRelay *r, const OutputStep *step, uint64_t n) {
        if (r->blind) {
                r->blind_dropped += n;
                return;
        }
        bool reclaim = output_layout_advance(&r->layout, step, n);
        if (step->kind == OUTPUT_STEP_LINEAR) {
                r->known = r->layout;
                return;
        }
        if (publish(r, &r->layout) < 0)
                return;
        /* Published first: no reader looks past the head of `output` now. */
        give_room_back(r, false, reclaim);
}

/* How many bytes the pipe holds: for a step in the ring, which publishes
 * the tail's new start before it writes, so it should not be more than
 * will come. At least 1, to tell an empty pipe (EAGAIN) from EOF. */
static uint64_t pipe_holds(OutputRelay *r) {
        int n = 0;
        if (ioctl(r->pipe_fd, FIONREAD, &n) < 0 || n <= 0)
                return 1;
        return (uint64_t) n;
}

/* Whether the pipe holds a byte, without taking it: 1 yes, 0 at EOF (no
 * writer left, nothing in it), -EAGAIN for not now. */
static int pipe_has_more(OutputRelay *r) {
        int n = 0;
        if (ioctl(r->pipe_fd, FIONREAD, &n) >= 0 && n > 0)
                return 1;
        struct pollfd p = { .fd = r->pipe_fd, .events = POLLIN };
        if (poll(&p, 1, 0) <= 0)
                return -EAGAIN;
        if (p.revents & POLLIN)
                return 1;
        return p.revents & POLLHUP ? 0 : -EAGAIN;
}

static void maybe_grow_pipe(OutputRelay *r) {
        if (r->pipe_size >= PIPE_SIZE_LARGE || r->grew_pipe || r->layout.total < PIPE_GROW_AFTER)
                return;
        r->grew_pipe = true;
        int size = fcntl(r->pipe_fd, F_SETPIPE_SZ, (int) PIPE_SIZE_LARGE);
        if (size > 0)
                r->pipe_size = (uint64_t) size;
}

int output_relay_pump(OutputRelay *r, uint64_t budget) {
        uint64_t moved = 0;
        while (!r->eof && moved < budget) {
                OutputStep step;
                uint64_t avail = budget - moved, in_pipe = UINT64_MAX;

                if (r->blind)
                        step = (OutputStep) { .kind = OUTPUT_STEP_DROP, .length = avail };
                else {
                        check_space(r);
                        if (!check_budget(r, &avail))
                                return 0;
                        if (output_layout_at_cap(&r->layout)) {
                                /* Only for a byte that comes: a job that
                                 * wrote exactly its cap stays LINEAR. */
                                int k = pipe_has_more(r);
                                if (k == 0) {
                                        r->eof = true;
                                        return 1;
                                }
                                if (k < 0)
                                        return 0;
                                freeze(r);
                        }
                        if (r->layout.phase == OUTPUT_RING)
                                avail = MIN(avail, in_pipe = pipe_holds(r));
                        if (r->blind)
                                step = (OutputStep) { .kind = OUTPUT_STEP_DROP, .length = avail };
                        else
                                output_layout_next_step(&r->layout, avail, &step);
                }

                ssize_t n = do_step(r, &step);
                if (n == 0) {
                        r->eof = true;
                        return 1;
                }
                if (n < 0) {
                        if (n == -EAGAIN)
                                return 0;
                        if (n == -EINTR || n == -ECANCELED)
                                continue;
                        if (step.kind == OUTPUT_STEP_DROP)
                                return (int) n; /* the pipe's own: into /dev/null cannot fail */
                        file_failed(r, (int) n);
                        continue;
                }
                account(r, &step, (uint64_t) n);
                moved += (uint64_t) n;
                maybe_grow_pipe(r);
                /* Less than asked for, or all it held: the pipe is empty.
                 * Back to poll() rather than ask again for an EAGAIN: it
                 * saves a third of the syscalls when the job writes in
                 * small pieces. */
                if ((uint64_t) n < step.length || (uint64_t) n >= in_pipe) {
                        if (r->grew_pipe && moved < r->pipe_size / 2)
                                r->hold_until = now_monotonic_usec() + HOLD_USEC;
                        return 0;
                }
        }
        return 0;
}

uint64_t output_relay_hold_usec(const OutputRelay *r) {
        if (r->eof || r->hold_until == 0)
                return 0;
        uint64_t now = now_monotonic_usec();
        return r->hold_until > now ? r->hold_until - now : 0;
}

/* --- the end ---------------------------------------------------------------- */

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
static void compact(OutputRelay *r) {
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
                                    r->job_id, format_size(a, sizeof a, size));
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

void output_relay_finish(OutputRelay *r) {
        r->finishing = true;
        /* Once every writer is gone the pipe holds at most its size; more
         * than that means something outside the job writes to it still. */
        uint64_t budget = 2 * r->pipe_size;
        while (!r->eof && budget > 0) {
                uint64_t before = r->layout.total + r->blind_dropped;
                int k = output_relay_pump(r, budget);
                uint64_t moved = r->layout.total + r->blind_dropped - before;
                if (k != 0 || moved == 0)
                        break;
                budget -= MIN(budget, moved);
        }
        if (!r->eof)
                log_warning("Job %s: its output pipe is still open after the teardown; not waiting for more",
                            r->job_id);
        if (r->layout.phase == OUTPUT_RING && !r->blind)
                compact(r);
        drop_unused_state(r);
}

void output_relay_summary(const OutputRelay *r, uint64_t *ret_bytes, uint64_t *ret_dropped) {
        *ret_bytes = r->layout.total + r->blind_dropped;
        *ret_dropped = output_layout_dropped(&r->layout) + r->blind_dropped;
}
