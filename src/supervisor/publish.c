/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "publish.h"
#include "time-util.h"

int publish_outcome(int dir_fd, const JobSpec *spec, const JobOutcome *o) {
        uint64_t now = now_realtime_usec();
        JobResult res = {
                .status = o->status,
                .exit_code = o->exit_code,
                .signal = o->signal,
                .timed_out = o->status == JOB_TIMED_OUT,
                .executed = o->executed,
                .contained = job_contained(spec->mechanism, o->executed, o->run),
                .started_at = o->run ? o->run->started_at : 0,
                .finished_at = now,
                .dead = o->dead,
                .method = o->method,
                .confirmed_at = o->dead ? (o->confirmed_at ?: now) : 0,
                .output_known = o->output_known,
                .output_bytes = o->output_bytes,
                .output_truncated = o->output_dropped_bytes > 0,
                .output_dropped_bytes = o->output_dropped_bytes,
                .cpu_usage_known = o->usage.cpu_known,
                .cpu_usage_usec = o->usage.cpu_usage_usec,
                .memory_peak_known = o->usage.memory_peak_known,
                .memory_peak = o->usage.memory_peak,
        };
        snprintf(res.reason, sizeof res.reason, "%s", o->reason ?: "");

        int r = job_store_finish(dir_fd, &res);
        if (r < 0)
                return log_error_errno(r, "Failed to record the end of job %s: %m", spec->id);
        return 0;
}

int publish_setup_failure(int dir_fd, const JobSpec *spec, int error, const char *step) {
        char reason[JOB_REASON_MAX];
        errno = -error;
        snprintf(reason, sizeof reason, "supervisor setup failed: %s: %m", step);
        log_error("%s", reason);

        (void) publish_outcome(dir_fd, spec, &(JobOutcome) {
                .status = JOB_FAILED,
                .exit_code = 1,
                .executed = false,
                .dead = true,
                .method = TEARDOWN_NOT_STARTED,
                .reason = reason,
        });
        return error;
}

void publish_teardown(int dir_fd, InputControl *ic, const JobTeardown *t) {
        int r = job_teardown_write(dir_fd, t);
        if (r < 0) {
                log_warning_errno(r, "Cannot write the teardown slot: %m");
                return;
        }
        input_control_send_teardown(ic);
}
