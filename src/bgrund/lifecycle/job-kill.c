/* SPDX-License-Identifier: MIT */
/* Kill's own path for a job in a cgroup: bgrund, nearest to the kernel's
 * word, kills the job's payload (<job cgroup>/payload, never the job's own
 * cgroup, which holds the supervisor), waits for "populated 0", writes the
 * teardown slot and answers. The supervisor sees its shell die, takes the
 * slot's word and completes the record (job-teardown.h). Taken only while
 * the supervisor has not decided the job's end itself (the slot's lock);
 * else, and for a job without a cgroup, the supervisor is told (job.c). */

#include <assert.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cgroup.h"
#include "containment.h"
#include "job-kill.h"
#include "job-private.h"
#include "job-store.h"
#include "job-teardown.h"
#include "job.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "supervisor-protocol.h"
#include "time-util.h"

/* As long as a supervisor waits for its own teardown's confirmation. */
#define KILL_CONFIRM_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* The kernel rate-limits cgroup.events notifications (one per ~10 ms, the
 * rest deferred by a timer): besides the watch, look again after short,
 * growing pauses. */
#define KILL_POLL_FIRST_USEC USEC_PER_MSEC
#define KILL_POLL_MAX_USEC (64 * USEC_PER_MSEC)

/* Whether cgroup is the payload of j's containment, as its grant names it. */
static bool job_payload_is(Job *j, const char *cgroup) {
        _cleanup_free_ char *job_cgroup = NULL;
        if (containment_job_cgroup(job_containment(j), j->live->dir_fd, &j->live->spec, &job_cgroup) < 0)
                return false;
        size_t n = strlen(job_cgroup);
        return !streq(job_cgroup, "/") && strncmp(cgroup, job_cgroup, n) == 0 && streq(cgroup + n, "/payload");
}

/* Confirmed (or, dead false, known to have failed): the slot says it
 * durably, the lock goes, Kill answers. */
static void job_kill_settle(Job *j, bool dead) {
        JobLive *l = j->live;
        JobTeardown t = {
                .status = JOB_KILLED,
                .dead = dead,
                .method = TEARDOWN_CGROUP_KILL,
                .confirmed_at = dead ? now_realtime_usec() : 0,
        };
        int r = job_teardown_write(l->dir_fd, &t);
        if (r < 0) {
                /* Its supervisor, told of the Kill, ends it; answered then. */
                log_warning_errno(r, "Job %s: cannot write its teardown slot: %m", j->id);
                job_kill_direct_done(l);
                return;
        }
        /* The answer first: the supervisor, waiting for the lock, would
         * take the CPU for the rest of the record. */
        job_confirm(j, &t);
        job_kill_direct_done(j->live);
}

/* 1 once settled. */
static int job_kill_check(Job *j) {
        JobLive *l = j->live;
        int r = cgroup_is_populated(l->kill_cgroup_fd);
        if (r == 0 || r == -ENOENT) {
                job_kill_settle(j, true);
                return 1;
        }
        if (now_monotonic_usec() >= l->kill_deadline) {
                log_warning("Job %s: its payload is not empty %s after cgroup.kill", j->id, "10 s");
                job_kill_settle(j, false);
                return 1;
        }
        return 0;
}

static int on_kill_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) cgroup_events_watch_populated(fd); /* re-armed; job_kill_check() looks */
        (void) job_kill_check(userdata);
        return 0;
}

static int on_kill_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        if (job_kill_check(j))
                return 0;
        j->live->kill_poll_usec = MIN(2 * j->live->kill_poll_usec, KILL_POLL_MAX_USEC);
        (void) sd_event_source_set_time_relative(s, j->live->kill_poll_usec);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* After cgroup.kill, the wait for "populated 0". */
static void job_kill_watch(Job *j, int ifd) {
        JobLive *l = j->live;
        sd_event *e = j->runtime->event;
        l->kill_poll_usec = KILL_POLL_FIRST_USEC;
        int r = sd_event_add_io(e, &l->kill_source, ifd, CGROUP_EVENTS_WATCH_EVENTS, on_kill_event, j);
        if (r >= 0)
                (void) sd_event_source_set_io_fd_own(l->kill_source, true);
        else
                safe_close(ifd);
        if (r >= 0)
                r = sd_event_add_time_relative(e, &l->kill_poll, CLOCK_MONOTONIC, l->kill_poll_usec, 0, on_kill_poll, j);
        if (r < 0) {
                /* Killed already: confirm it here rather than not at all. */
                log_warning_errno(r, "Job %s: cannot watch its payload: %m", j->id);
                job_kill_settle(j, cgroup_wait_empty(l->kill_cgroup_fd, KILL_CONFIRM_TIMEOUT_USEC) == 0);
        }
}

int job_kill_direct(Job *j) {
        JobLive *l = j->live;
        assert(job_is_supervised(j));
        if (!l->run || !l->run->cgroup || !l->run->cgroup[0] || job_teardown_known(j) || !job_payload_is(j, l->run->cgroup))
                return -EOPNOTSUPP;

        _cleanup_close_ int lock_fd = -EBADF, cg_fd = -EBADF, ifd = -EBADF;
        int r = job_teardown_lock(l->dir_fd, false, &lock_fd);
        if (r < 0)
                return r; /* -EAGAIN: its supervisor decided its end already */
        JobTeardown t;
        if (job_teardown_read(l->dir_fd, &t) >= 0 || faccessat(l->dir_fd, JOB_RESULT_FILE, F_OK, AT_SYMLINK_NOFOLLOW) >= 0)
                return -EALREADY; /* decided and said: its end is on its way */
        r = cgroup_open(l->run->cgroup, &cg_fd);
        if (r >= 0)
                r = cgroup_events_watch(cg_fd, &ifd); /* before looking: nothing slips between */
        if (r < 0)
                return r;
        /* The contract's rule: killed only if something of it was left. */
        r = cgroup_events_watch_populated(ifd);
        if (r <= 0)
                return r < 0 ? r : -ESRCH; /* ended on its own: its supervisor says how */
        r = cgroup_kill(cg_fd);
        if (r < 0)
                return r;

        l->kill_lock_fd = TAKE_FD(lock_fd);
        l->kill_cgroup_fd = TAKE_FD(cg_fd);
        l->kill_deadline = now_monotonic_usec() + KILL_CONFIRM_TIMEOUT_USEC;
        /* Should bgrund die before the slot says it, the supervisor, which
         * waits for the lock, knows a Kill came. */
        (void) pidref_kill(&l->supervisor, SUPERVISOR_KILL_SIGNAL);
        if (!job_kill_check(j))
                job_kill_watch(j, TAKE_FD(ifd));
        return 0;
}
