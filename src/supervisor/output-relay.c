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
#include "output-relay-internal.h"
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
#define SPLICE_FLAGS (SPLICE_F_MOVE | SPLICE_F_NONBLOCK)

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
        output_room_reserve(r);

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

/* --- relaying -------------------------------------------------------------- */

static void freeze(OutputRelay *r) {
        output_layout_freeze(&r->layout);
        (void) output_room_publish(r, &r->layout);
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
                        if (output_room_publish(r, &pre) < 0)
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
        if (output_room_publish(r, &r->layout) < 0)
                return;
        /* Published first: no reader looks past the head of `output` now. */
        output_room_give_back(r, false, reclaim);
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
                        output_room_check_space(r);
                        if (!output_room_check_budget(r, &avail))
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
                        output_room_file_failed(r, (int) n);
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
                output_relay_compact(r);
        output_room_drop_unused_state(r);
}

void output_relay_summary(const OutputRelay *r, uint64_t *ret_bytes, uint64_t *ret_dropped) {
        *ret_bytes = r->layout.total + r->blind_dropped;
        *ret_dropped = output_layout_dropped(&r->layout) + r->blind_dropped;
}
