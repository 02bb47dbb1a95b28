/* SPDX-License-Identifier: MIT */
/* An end from outside (Kill, Stop, the wall-clock limit) confirmed by the
 * job's supervisor before its result: the teardown slot (job-teardown.h)
 * makes the status and the teardown final, so Kill and Stop answer now;
 * Wait and JobRemoved wait for the result, which repeats them. */

#include "job-private.h"
#include "job-store.h"
#include "job-teardown.h"
#include "job.h"
#include "log.h"
#include "runtime.h"

void job_teardown_confirmed(Job *j) {
        if (j->phase != JOB_PHASE_RUNNING || j->live->confirmed || j->live->releasing)
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

int job_view_teardown(Job *j, JobTeardown *ret) {
        if (j->phase != JOB_PHASE_ENDED) {
                *ret = j->live->confirmed ? j->live->teardown : (JobTeardown) {};
                return 0;
        }
        JobView v;
        int r = job_view(j, &v);
        if (r >= 0)
                *ret = v.teardown;
        return r;
}

void job_confirm(Job *j, const JobTeardown *t) {
        Runtime *rt = j->runtime;
        j->live->teardown = *t;
        j->live->confirmed = true;
        j->status = t->status;
        runtime_job_confirmed(rt, j);
        log_debug("Job %s: %s, teardown confirmed", j->id, job_status_to_string(t->status));
        if (rt->notifier && rt->notifier->job_confirmed)
                rt->notifier->job_confirmed(rt->notifier_data, j);
}
