/* SPDX-License-Identifier: MIT */
/* Launch on the bus: read, authorize, answer; what the request means is
 * launch-request.c's. Validation comes before anything is created, so bad
 * input changes nothing. */
#include <inttypes.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "bus-args.h"
#include "bus-authority.h"
#include "bus-errors.h"
#include "bus-caller-watch.h"
#include "bus-client.h"
#include "bus-launch.h"
#include "bus-pending.h"
#include "bus-job-path.h"
#include "bus-service.h"
#include "job-queue.h"
#include "launch-request.h"
#include "log.h"

/* A refusal of launch-request.c's as the caller's error: -EINVAL is
 * InvalidArgs, one of bgrun's codes its D-Bus error (errors.h), any other
 * errno its own. */
static int refused(sd_bus_error *error, int r, const char *message) {
        const BgrunErrorInfo *i = bgrun_error_info(bgrun_error_code(r));
        return message || i ? bus_error_set(error, r, "%s", message ?: i->what) : r;
}

/* runtime_launch()'s refusal r as the caller's error, naming the limit
 * reached and its value. */
static int launch_refused(BusService *s, const LaunchRequest *req, const JobSpec *spec, int r, sd_bus_error *error) {
        const BgrunLimits *l = &s->runtime->config.limits;
        uint64_t limit = 0;

        switch (bgrun_error_code(r)) {
        case BGRUN_E_NO_CONTAINMENT:
                return bus_error_set(error, r, "Containment mode is enforcing and no containing mechanism is "
                                     "available; nothing was run");
        case BGRUN_E_TOO_MANY_RUNNING:
                return bus_error_set(error, r, "MaxRunningJobs=%" PRIu64 " reached: uid %u has that many jobs running; "
                                     "nothing was started", l->max_running_jobs, (unsigned) req->uid);
        case BGRUN_E_TOO_MANY_PARALLEL:
                (void) queue_check_room(s->runtime, spec, &limit);
                return bus_error_set(error, r, "MaxParallel=%" PRIu64 " reached: session '%s' of uid %u has that many "
                                     "jobs running; nothing was started (Queue waits for room)", limit, req->session,
                                     (unsigned) req->uid);
        case BGRUN_E_QUEUE_FULL:
                return bus_error_set(error, r, "MaxQueuedJobs=%" PRIu64 " reached: uid %u has that many jobs queued; "
                                     "nothing was queued", l->max_queued_jobs, (unsigned) req->uid);
        case BGRUN_E_KEEP_FREE:
                return bus_error_set(error, r, "KeepFree=%" PRIu64 " reached: the state's file system has less free; "
                                     "nothing was started", l->keep_free);
        case BGRUN_E_OVER_DISK_BUDGET:
                return bus_error_set(error, r, "OutputMaxBytesPerUser=%" PRIu64 " reached: uid %u keeps that much on "
                                     "disk with this job's record, in running jobs; nothing was started",
                                     l->output_max_bytes_per_user, (unsigned) req->uid);
        case BGRUN_E_START_FAILED:
                return bus_error_set(error, r, "No mechanism could start the job; nothing was run");
        case BGRUN_E_DEADLINE_PASSED:
                return bus_error_set(error, r, "LaunchDeadlineUSec passed before the command could be started; "
                                     "nothing ran");
        default:
                return bus_error_set(error, r, "Cannot create the job: %s", strerror(-r));
        }
}

/* A Launch of a RequestId that req's owner launched job j with: its answer,
 * once j runs if it is starting, and nothing started. */
static int answer_same_request(BusService *s, sd_bus_message *m, const LaunchRequest *req, const LaunchOptions *o,
                               Job *j, sd_bus_error *error) {
        JobView v;
        int r = job_view(j, &v);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot read the record of job %s: %m", j->id);
        _cleanup_free_ char *message = NULL;
        r = launch_request_same(req, o, j->id, v.spec, &message);
        if (r < 0)
                return refused(error, r, message);
        if (job_is_starting(j)) {
                r = pending_call_add(s, j, PENDING_LAUNCH_SAME, m, 0, error);
                return r < 0 ? r : 1;
        }
        char path[BUS_JOB_PATH_MAX];
        return sd_bus_reply_method_return(m, "so", j->id, bus_job_path(j->id, path));
}

int bus_method_launch(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        LaunchRequest req = {};
        _cleanup_(launch_options_done) LaunchOptions o = {};
        _cleanup_(job_spec_done) JobSpec spec = {};
        _cleanup_free_ char *message = NULL;
        int r;

        r = sd_bus_message_read(m, "sss", &req.command, &req.session, &req.cwd);
        if (r >= 0) {
                r = launch_request_check(&req, &message);
                if (r < 0)
                        return refused(error, r, message);
        }
        if (r >= 0)
                r = bus_read_launch_options(m, &o, error);
        if (r < 0)
                return r;

        r = bus_caller_creds(s, m, &req.uid, &req.pid, error);
        if (r < 0)
                return r;
        if (launch_options_given(&o, LAUNCH_OPTION_USER) && req.uid != 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: only root may run a job as another user");
        /* At most once: a RequestId its owner launched a job with answers
         * that job, before any limit or deadline is looked at. */
        Job *same = o.spec.request_id ? runtime_find_request(s->runtime, req.uid, o.spec.request_id) : NULL;
        if (same)
                return answer_same_request(s, m, &req, &o, same, error);

        r = launch_request_spec(s->runtime, &req, &o, &spec, &message);
        if (r < 0)
                return refused(error, r, message);
        r = bus_caller_watch_prepare(s, m, &spec, error);
        if (r < 0)
                return r;

        /* Launch waits for the job to run: the caller must have room. */
        r = bus_caller_may_wait(s, m, req.uid, error);
        if (r < 0)
                return r;

        Job *j;
        r = runtime_launch(s->runtime, &spec, &j);
        if (r < 0)
                return launch_refused(s, &req, &spec, r, error);

        r = bus_caller_watch_bind(s, m, j);
        if (r >= 0 && job_is_queued(j)) {
                /* Recorded and durable: answered now, it starts later. */
                char path[BUS_JOB_PATH_MAX];
                r = sd_bus_reply_method_return(m, "so", j->id, bus_job_path(j->id, path));
                return r < 0 ? r : 1;
        }
        if (r >= 0)
                r = pending_call_add(s, j, PENDING_LAUNCH, m, 0, error);
        if (r < 0) {
                /* Nobody can be told about it: end it as a Kill would. */
                job_kill(j);
                return r;
        }
        return 1;
}
