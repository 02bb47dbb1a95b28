/* SPDX-License-Identifier: MIT */

/* What the output may keep: the layout readers know (published in
 * output.state), free space (KeepFree=), the owner's budget
 * (OutputMaxBytesPerUser=) and writes that failed. Each shortage moves the
 * layout so that the bytes past it are dropped and counted, never the job
 * held up. */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "output-relay-internal.h"
#include "output-store.h"
#include "time-util.h"

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

/* At its disk limit, the pipe waits this long for bgrund's answer, looking
 * every DISK_HOLD_USEC (a job that writes faster than the answer comes is
 * slowed, not cut); past it (no bgrund to answer), the files grow no more
 * until an answer comes. With no room, bgrund is asked again every
 * DISK_ASK_AGAIN_USEC while output comes. */
#define DISK_WAIT_USEC (2 * USEC_PER_SEC)
#define DISK_HOLD_USEC (2 * USEC_PER_MSEC)
#define DISK_ASK_AGAIN_USEC USEC_PER_SEC

char *output_format_size(char *buf, size_t len, uint64_t bytes) {
        if (bytes >= (UINT64_C(1) << 20))
                snprintf(buf, len, "%.1fM", (double) bytes / (1 << 20));
        else
                snprintf(buf, len, "%" PRIu64 "B", bytes);
        return buf;
}

/* --- the state, as readers know it ------------------------------------- */

/* The state file, empty (LINEAR to readers) but with its block: publishing
 * a layout then never needs room, so running out of room can always be
 * told, and told again when room is back. Without it (no room even for
 * that, or no fallocate() there), publish() makes it when first needed. */
void output_room_reserve(OutputRelay *r) {
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
void output_room_drop_unused_state(OutputRelay *r) {
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

int output_room_publish(OutputRelay *r, const OutputLayout *l) {
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
                    r->job_id, output_format_size(a, sizeof a, free_bytes), output_format_size(b, sizeof b, r->keep_free));
}

static void space_low(OutputRelay *r) {
        if (output_layout_low_space(&r->layout))
                (void) output_room_publish(r, &r->layout);
}

static void truncate_file(OutputRelay *r, int fd, uint64_t size, const char *name) {
        if (fd >= 0 && ftruncate(fd, (off_t) size) < 0)
                log_debug_errno(negative_errno(), "Job %s: cannot shorten %s: %m", r->job_id, name);
}

/* The layout changed such that the ring's bytes are kept no more (it
 * starts over, or ended) and maybe `output`'s past the head neither: now
 * that readers know, give their room back. */
void output_room_give_back(OutputRelay *r, bool ring, bool reclaim) {
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
        if (output_room_publish(r, &r->layout) < 0)
                return;
        /* A ring that starts over, from position 0, holds nothing kept. */
        output_room_give_back(r, r->layout.ring_origin == r->layout.total, reclaim);
}

static uint64_t space_check_interval(uint64_t free_bytes, uint64_t keep_free) {
        uint64_t margin = free_bytes > keep_free ? free_bytes - keep_free : 0;
        uint64_t n = margin / SPACE_CHECK_SHARE;
        return n < SPACE_CHECK_MIN_BYTES ? SPACE_CHECK_MIN_BYTES : MIN(n, SPACE_CHECK_BYTES);
}

/* Not on every write: the closer free space is to KeepFree=, the sooner. */
void output_room_check_space(OutputRelay *r) {
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
                            r->job_id, output_format_size(a, sizeof a, output_relay_disk_used(r)));
        set_short(r, &r->over_budget, !room);
}

bool output_relay_awaits_budget(const OutputRelay *r) {
        return !r->eof && !r->over_budget && !r->finishing && r->disk_waiting_since != 0;
}

void output_relay_disk_reported(OutputRelay *r) {
        r->disk_report_due = false;
        r->disk_reported_usec = now_monotonic_usec();
}

/* Whether the next bytes may go on now, at most *avail of them growing the
 * files: the limit is asked to move half a window ahead of it; at it, the
 * pipe waits for the answer (false), until DISK_WAIT_USEC says nobody will
 * answer and the files grow no more. */
bool output_room_check_budget(OutputRelay *r, uint64_t *avail) {
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
                (void) output_room_publish(r, &r->layout);
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
        if (output_room_publish(r, &r->layout) >= 0)
                output_room_give_back(r, true, reclaim);
}

/* A write to an output file failed: for want of room, dropped while there
 * is none; for anything else (a filesystem that cannot splice, EPERM,
 * EMFILE, ENOMEM, …), dropped from now on. Either way counted in the
 * layout (readers see the gap, compaction writes its marker), and the pipe
 * drained: never the job held up by its output. */
void output_room_file_failed(OutputRelay *r, int error) {
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
        if (output_room_publish(r, &r->layout) >= 0)
                output_room_give_back(r, true, reclaim);
}

