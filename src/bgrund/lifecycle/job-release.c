/* SPDX-License-Identifier: MIT */
/* The release of a job whose supervisor is lost or cannot be verified:
 * bgrund kills its containment itself, confirms it empty (asynchronously
 * where the mechanism can tell, else by asking again) and records the job
 * as failed, or killed if a Kill asked. */

#include <assert.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "containment.h"
#include "job-private.h"
#include "job-store.h"
#include "job-teardown.h"
#include "job.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "time-util.h"

/* How long a release may wait for a cgroup to empty after killing it. */
#define RELEASE_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* How often to look again where no event tells (a process group). */
#define RELEASE_POLL_USEC (20 * USEC_PER_MSEC)

/* A supervisor publishes its result before it exits: one that bgrund found
 * gone (or that the release killed) may have published it meanwhile, and
 * that real end must win over the release's guess. */
static bool job_end_if_published(Job *j) {
        JobResult res = {};
        if (job_store_read_result(j->live->dir_fd, &res) < 0)
                return false;
        log_debug("Job %s: its supervisor published its end after all", j->id);
        job_end_with_result(j, &res);
        return true;
}

static void job_release_finish(Job *j, bool dead, TeardownMethod method) {
        assert(j->live->releasing);
        if (job_end_if_published(j))
                return;
        bool killed = j->live->kill_requested;
        /* A teardown its supervisor confirmed (and Kill may have answered
         * with) stays what the record says, whatever the release found. */
        JobTeardown t;
        bool confirmed = j->live->confirmed ? (t = j->live->teardown, true)
                                            : job_teardown_read(j->live->dir_fd, &t) >= 0;
        if (confirmed) {
                killed = true;
                dead = t.dead;
                method = t.method;
        }
        JobResult res = {
                .status = confirmed ? t.status : killed ? JOB_KILLED : JOB_FAILED,
                .exit_code = -1,
                .executed = j->live->have_run,
                .contained = job_contained(j->live->spec.mechanism, j->live->have_run, j->live->have_run ? &j->live->run : NULL),
                .finished_at = now_realtime_usec(),
                .dead = dead,
                .method = method,
                .confirmed_at = confirmed ? t.confirmed_at : dead ? now_realtime_usec() : 0,
        };
        res.timed_out = res.status == JOB_TIMED_OUT;
        if (j->live->damage)
                snprintf(res.reason, sizeof res.reason,
                         "damaged record: its %s was unreadable when bgrund started; its containment was released",
                         j->live->damage);
        else if (confirmed)
                strcpy(res.reason, "its supervisor was lost after confirming its teardown");
        else
                strcpy(res.reason, killed ? "killed by bgrund: its supervisor did not answer"
                                          : "the job's supervisor was lost; its containment was released");
        int r = job_store_finish(j->live->dir_fd, &res);
        if (r < 0)
                log_error_errno(r, "Failed to record the end of job %s: %m", j->id);
        job_end(j, res.status, &res);
}

/* Whether nothing of the job is left, as far as its mechanism can tell. A
 * mechanism that cannot tell (no run.json to look at) proves death only
 * when the supervisor never ran the command. */
static bool job_release_confirmed(Job *j) {
        Containment *c = job_containment(j);
        int r = containment_is_empty(c, j->live->have_run ? &j->live->run : NULL, j->live->teardown_handle);
        if (r >= 0)
                return r > 0;
        return !j->live->let_go && !j->live->have_run;
}

static int on_release_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        char buf[4096];
        while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
                ;
        if (job_release_confirmed(j))
                job_release_finish(j, true, job_containment(j)->ops->teardown_method);
        return 0;
}

/* For a mechanism where nothing tells when the job is gone: ask again. */
static int on_release_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        if (job_release_confirmed(j)) {
                job_release_finish(j, true, job_containment(j)->ops->teardown_method);
                return 0;
        }
        (void) sd_event_source_set_time_relative(s, RELEASE_POLL_USEC);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_release_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        log_warning("Job %s: containment not confirmed empty after teardown", j->id);
        job_release_finish(j, job_release_confirmed(j), job_containment(j)->ops->teardown_method);
        return 0;
}

void job_release(Job *j) {
        Runtime *rt = j->runtime;
        Containment *c = job_containment(j);
        assert(j->phase != JOB_PHASE_ENDED);
        assert(!j->live->releasing);
        int r;

        if (job_end_if_published(j))
                return;
        log_info("Job %s: supervisor not verified, releasing its containment", j->id);
        rt->reaped.released++;
        j->live->releasing = true;
        /* From here the release owns the end: the supervisor's exit, which
         * the kill below may cause, is no news. */
        j->live->supervisor_source = sd_event_source_disable_unref(j->live->supervisor_source);
        j->live->kill_watchdog = sd_event_source_disable_unref(j->live->kill_watchdog);
        job_kill_direct_done(j->live);

        TeardownMethod method = c->ops->teardown_method;
        _cleanup_free_ char *cgroup = NULL;
        r = containment_job_cgroup(c, j->live->dir_fd, &j->live->spec, &cgroup);
        if (r < 0) {
                log_error_errno(r, "Job %s: cannot name its containment: %m", j->id);
                job_release_finish(j, false, method);
                return;
        }
        r = containment_kill(c, j->id, cgroup, j->live->have_run ? &j->live->run : NULL, &j->live->teardown_handle);
        if (r == -ENOENT) {
                job_release_finish(j, true, TEARDOWN_CGROUP_GONE);
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Job %s: cannot kill its containment: %m", j->id);
                job_release_finish(j, false, method);
                return;
        }
        if (job_release_confirmed(j)) {
                job_release_finish(j, true, method);
                return;
        }

        int ifd;
        r = containment_watch(c, j->live->teardown_handle, &ifd);
        if (r >= 0) {
                r = sd_event_add_io(rt->event, &j->live->teardown_source, ifd, EPOLLIN, on_release_event, j);
                if (r < 0)
                        safe_close(ifd);
                else
                        (void) sd_event_source_set_io_fd_own(j->live->teardown_source, true);
        } else if (r == -EOPNOTSUPP)
                r = sd_event_add_time_relative(rt->event, &j->live->teardown_source, CLOCK_MONOTONIC,
                                               RELEASE_POLL_USEC, 0, on_release_poll, j);
        if (r >= 0)
                r = sd_event_add_time_relative(rt->event, &j->live->teardown_timer, CLOCK_MONOTONIC,
                                               RELEASE_TIMEOUT_USEC, 0, on_release_timeout, j);
        if (r < 0)
                job_release_finish(j, job_release_confirmed(j), method);
        else
                /* The watch exists now; catch an emptying that came before it. */
                (void) on_release_event(NULL, -EBADF, 0, j);
}

static int on_kill_watchdog(sd_event_source *s, uint64_t usec, void *userdata) {
        Job *j = userdata;
        j->live->kill_watchdog = sd_event_source_disable_unref(j->live->kill_watchdog);
        if (j->phase != JOB_PHASE_RUNNING || j->live->releasing)
                return 0;
        log_warning("Job %s: its supervisor did not end it after its kill; releasing its containment", j->id);
        job_release(j);
        return 0;
}

void job_release_unless_ended(Job *j, uint64_t patience) {
        JobLive *l = j->live;
        l->kill_watchdog = sd_event_source_disable_unref(l->kill_watchdog);
        int r = sd_event_add_time_relative(j->runtime->event, &l->kill_watchdog, CLOCK_MONOTONIC, patience, 0,
                                           on_kill_watchdog, j);
        if (r < 0)
                log_warning_errno(r, "Job %s: no kill watchdog: %m", j->id);
}
