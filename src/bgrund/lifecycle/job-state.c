/* SPDX-License-Identifier: MIT */
/* A job's state, and the one function that changes it: what follows from a
 * change (the status it shows, the running counts, RunningJobs, the ended
 * queue, the notifier, and the release of what the state it leaves owned)
 * follows here, so no caller keeps them in step by hand. And the end from outside that the teardown
 * slot confirms before the result (job-teardown.h): from it the status and
 * teardown are final, so Kill and Stop answer then; Wait and JobRemoved wait
 * for the result, which repeats them. */

#include <assert.h>

#include "job-private.h"
#include "job-queue.h"
#include "job-store.h"
#include "job-teardown.h"
#include "job.h"
#include "log.h"
#include "runtime.h"

static const char *const state_table[_JOB_STATE_MAX] = {
        [JOB_STATE_QUEUED] = "queued",
        [JOB_STATE_STARTING] = "starting",
        [JOB_STATE_LET_GO] = "let-go",
        [JOB_STATE_RUNNING] = "running",
        [JOB_STATE_STOPPING] = "stopping",
        [JOB_STATE_KILLING] = "killing",
        [JOB_STATE_CONFIRMED] = "confirmed",
        [JOB_STATE_RELEASING] = "releasing",
        [JOB_STATE_ENDED] = "ended",
};

const char *job_state_to_string(JobState s) {
        return (unsigned) s < _JOB_STATE_MAX ? state_table[s] : NULL;
}

/* The status each state shows. A confirmed teardown's status is final from
 * the confirmation on (a release after it keeps it); an end's is the one
 * job_set_ended() gives. */
static const struct {
        JobStatus status;
        bool teardown_wins;     /* a confirmed teardown's status, when there is one */
} state_status[_JOB_STATE_MAX] = {
        [JOB_STATE_QUEUED] = { JOB_QUEUED },
        [JOB_STATE_STARTING] = { JOB_RUNNING },
        [JOB_STATE_LET_GO] = { JOB_RUNNING },
        [JOB_STATE_RUNNING] = { JOB_RUNNING },
        [JOB_STATE_STOPPING] = { JOB_RUNNING },
        [JOB_STATE_KILLING] = { JOB_RUNNING },
        [JOB_STATE_CONFIRMED] = { JOB_RUNNING, true },
        [JOB_STATE_RELEASING] = { JOB_RUNNING, true },
        [JOB_STATE_ENDED] = { JOB_RUNNING }, /* never read: job_set_ended() */
};

static bool is_starting(JobState s) {
        return s == JOB_STATE_STARTING || s == JOB_STATE_LET_GO;
}

void job_set_state(Job *j, JobState s) {
        Runtime *rt = j->runtime;
        JobState old = j->state;
        if (s == old)
                return;
        /* Counted while in the table (its account): before and after. */
        bool counted = j->account && job_counts_running(j);
        j->state = s;
        bool counts = j->account && job_counts_running(j);
        log_debug("Job %s: %s -> %s", j->id, job_state_to_string(old), job_state_to_string(s));

        /* Out of its queue: starting, or ending before it started. */
        if (old == JOB_STATE_QUEUED && j->account)
                queue_remove(rt, j);
        /* What only a start holds goes once it is over; its supervisor is
         * then the verified pidref, or nothing. */
        if (is_starting(old) && !is_starting(s) && j->live)
                job_start_release(&j->live->start);
        /* Launch answered it queued: it exists for everyone, whatever its
         * start does (job-start.c, job-input.c). */
        if (s == JOB_STATE_QUEUED)
                j->answered_queued = true;
        if (s != JOB_STATE_ENDED)
                j->status = state_status[s].teardown_wins && job_teardown_known(j) ? j->live->teardown.status
                                                                                    : state_status[s].status;
        if (counted != counts) {
                runtime_count_running(rt, j, counts);
                runtime_notify_running_jobs(rt);
        }
        if (s == JOB_STATE_CONFIRMED) {
                log_debug("Job %s: %s, teardown confirmed", j->id, job_status_to_string(j->status));
                if (rt->notifier && rt->notifier->job_confirmed)
                        rt->notifier->job_confirmed(rt->notifier_data, j);
        }
        /* An end is told by job_end(), once the live part is gone. */
        if (s == JOB_STATE_ENDED && j->account)
                runtime_job_ended(rt, j);
        /* Ended: only the struct stays. */
        if (s == JOB_STATE_ENDED)
                job_release_live_state(j);
}

void job_set_ended(Job *j, JobStatus status, const JobResult *res) {
        assert(status != JOB_RUNNING && status != JOB_QUEUED);
        j->status = status;
        if (res->started_at)
                j->started_at = res->started_at;
        j->finished_at = res->finished_at;
        j->exit_code = res->exit_code;
        j->signal = res->signal;
        job_set_state(j, JOB_STATE_ENDED);
}

void job_confirm(Job *j, const JobTeardown *t) {
        assert(job_is_supervised(j) && !job_teardown_known(j));
        j->live->teardown = *t;
        job_set_state(j, JOB_STATE_CONFIRMED);
}

void job_teardown_confirmed(Job *j) {
        if (!job_is_supervised(j) || job_teardown_known(j))
                return;
        JobTeardown t;
        int r = job_teardown_read(j->live->dir_fd, &t);
        if (r < 0) {
                /* Then its end is told at the result, as for any other. */
                if (r != -ENOENT)
                        log_warning_errno(r, "Job %s: its teardown slot is unreadable: %m", j->id);
                return;
        }
        job_confirm(j, &t);
}
