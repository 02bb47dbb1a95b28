/* SPDX-License-Identifier: MIT */
/* The Manager object: each method reads its arguments, validates them,
 * authorizes the caller, acts through the runtime, and replies (or leaves
 * the reply to the notifications, for calls that wait on a job). */
#include <sys/stat.h>

#include "bgrun/bus-api.h"
#include "build-config.h"
#include "bus-args.h"
#include "bus-authority.h"
#include "bus-client.h"
#include "bus-input.h"
#include "bus-launch.h"
#include "bus-listing.h"
#include "bus-manager.h"
#include "bus-output.h"
#include "bus-pending.h"
#include "bus-record.h"
#include "bus-service.h"
#include "bus-subscribe.h"
#include "job-queue.h"
#include "macro.h"
#include "launch-options.h"
#include "record-keys.h"

static int method_get(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Job *j;
        int r = bus_read_job(userdata, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        return r < 0 ? r : bus_reply_record(j, m);
}

/* Stop's options; what is not given is the job's own. */
static int read_stop_options(sd_bus_message *m, const Job *j, int *ret_sig, uint64_t *ret_grace, sd_bus_error *error) {
        _cleanup_(launch_options_done) LaunchOptions o = {};
        int r = bus_read_stop_options(m, &o, error);
        if (r < 0)
                return r;
        *ret_sig = launch_options_given(&o, LAUNCH_OPTION_STOP_SIGNAL) ? o.spec.stop_signal : j->live->spec.stop_signal;
        *ret_grace = launch_options_given(&o, LAUNCH_OPTION_STOP_GRACE_USEC) ? o.spec.stop_grace_usec
                                                                             : j->live->spec.stop_grace_usec;
        return 0;
}

/* Kill and Stop: answered once the teardown is confirmed (bus-service.c). */
static int kill_or_stop(sd_bus_message *m, BusService *s, bool stop, sd_bus_error *error) {
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        if (job_is_ended(j) || job_teardown_known(j))
                return bus_reply_kill(j, m, false);
        int sig = 0;
        uint64_t grace = 0;
        r = stop ? read_stop_options(m, j, &sig, &grace, error) : 0;
        if (r >= 0)
                r = pending_call_add(s, j, PENDING_KILL, m, 0, error);
        if (r < 0)
                return r;
        if (stop)
                job_stop(j, sig, grace);
        else
                job_kill(j);
        return 1;
}

static int method_kill(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return kill_or_stop(m, userdata, false, error);
}

static int method_stop(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return kill_or_stop(m, userdata, true, error);
}

static int method_kill_session(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const char *session;
        uid_t uid;
        int r = sd_bus_message_read(m, "s", &session);
        if (r >= 0)
                r = bus_caller_uid(s, m, &uid, error);
        if (r < 0)
                return r;
        if (!*session)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "KillSession needs a session; \"\" would be every session");

        /* The caller's own jobs only, admins included: its session's live
         * ones (job-queue.h), those still counted running and the queued. */
        SessionGroup *g = queue_session(s->runtime, uid, session);
        size_t n = 0;
        for (Job *j = g ? g->members.head : NULL; j; j = j->group_next)
                n++;
        _cleanup_free_ Job **jobs = calloc(n + 1, sizeof(Job *));
        if (!jobs)
                return -ENOMEM;
        n = 0;
        for (Job *j = g ? g->members.head : NULL; j; j = j->group_next)
                if (job_counts_running(j) || job_is_queued(j))
                        jobs[n++] = j;
        r = pending_kill_session_add(s, jobs, n, m, error);
        if (r < 0)
                return r;
        /* A queued one ends at once (a group left empty is freed): by the array. */
        for (size_t i = 0; i < n; i++)
                job_kill(jobs[i]);
        return 1;
}

static int method_wait(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        uint64_t timeout;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (r >= 0)
                r = sd_bus_message_read(m, "t", &timeout);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        if (job_is_ended(j) || timeout == 0)
                return bus_reply_record(j, m);
        r = pending_call_add(s, j, PENDING_WAIT, m, timeout, error);
        return r < 0 ? r : 1;
}

static int method_forget(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        /* Killed, its record final within milliseconds: "kill, then forget"
         * never fails for it (bus-service.c forgets it at its end). */
        if (job_teardown_known(j)) {
                r = pending_call_add(s, j, PENDING_FORGET, m, 0, error);
                return r < 0 ? r : 1;
        }
        char id[JOB_ID_MAX];
        strcpy(id, j->id);
        r = job_forget(j);
        if (r == -EBUSY)
                return sd_bus_error_setf(error, BGRUN_ERROR_JOB_NOT_FINISHED, "Job %s is still running", id);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot remove job %s: %m", id);
        return sd_bus_reply_method_return(m, "");
}

static int method_reap(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        uid_t uid;
        int r = bus_caller_uid(s, m, &uid, error);
        if (r < 0)
                return r;
        r = caller_is_admin(s, m, uid);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r <= 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: Reap is for administrators");
        ReapCounts c;
        r = runtime_reap(s->runtime, &c);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "a{sv}", 3,
                                          reap_keys[REAP_KEY_BACKGROUND_KEPT].name, "u", c.background_kept,
                                          reap_keys[REAP_KEY_RELEASED].name, "u", c.released,
                                          reap_keys[REAP_KEY_ORPHANS_KILLED].name, "u", c.orphans_killed);
}

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", BGRUN_VERSION);
}

static int property_mode(sd_bus *bus, const char *path, const char *interface, const char *property,
                         sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        return sd_bus_message_append(reply, "s", containment_mode_to_string(s->runtime->config.mode));
}

static int property_mechanisms(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const BgrunConfig *c = &s->runtime->config;
        /* In use: configured, and set up here (cgroupfs is skipped where
         * systemd owns the cgroup tree, say). */
        int r = sd_bus_message_open_container(reply, 'a', "s");
        for (unsigned i = 0; r >= 0 && i < c->n_mechanisms; i++) {
                Containment *m = runtime_containment(s->runtime, c->mechanisms[i]);
                if (m && m->initialized)
                        r = sd_bus_message_append(reply, "s", mechanism_to_string(c->mechanisms[i]));
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_running(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        return sd_bus_message_append(reply, "u", (uint32_t) s->runtime->n_running);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ContainmentMode", "s", property_mode, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Mechanisms", "as", property_mechanisms, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("RunningJobs", "u", property_running, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Launch",
                                SD_BUS_ARGS("s", command, "s", session, "s", cwd, "a{sv}", options),
                                SD_BUS_RESULT("s", id, "o", job),
                                bus_method_launch, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Get", SD_BUS_ARGS("s", id), SD_BUS_RESULT("a{sv}", record),
                                method_get, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListJobs", SD_BUS_ARGS("s", session), SD_BUS_RESULT("a(sssso)", jobs),
                                bus_method_list_jobs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListJobsPaged", SD_BUS_ARGS("s", session, "s", after, "u", max),
                                SD_BUS_RESULT("a(sssso)", jobs, "s", next),
                                bus_method_list_jobs_paged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListJobsPagedEx", SD_BUS_ARGS("s", session, "s", after, "u", max),
                                SD_BUS_RESULT("a(ssssoiitt)", jobs, "s", next),
                                bus_method_list_jobs_paged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Kill", SD_BUS_ARGS("s", id), SD_BUS_RESULT("a{sv}", result),
                                method_kill, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("s", id, "a{sv}", options), SD_BUS_RESULT("a{sv}", result),
                                method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("KillSession", SD_BUS_ARGS("s", session), SD_BUS_RESULT("a{sv}", result),
                                method_kill_session, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadOutput", SD_BUS_ARGS("s", id, "t", offset, "u", max),
                                SD_BUS_RESULT("ay", data, "t", next, "b", complete),
                                bus_method_read_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("WaitOutput", SD_BUS_ARGS("s", id, "t", offset, "u", max, "t", timeout_usec),
                                SD_BUS_RESULT("ay", data, "t", next, "b", complete),
                                bus_method_wait_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("OpenOutput", SD_BUS_ARGS("s", id), SD_BUS_RESULT("h", fd),
                                bus_method_open_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Wait", SD_BUS_ARGS("s", id, "t", timeout_usec), SD_BUS_RESULT("a{sv}", record),
                                method_wait, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Forget", SD_BUS_ARGS("s", id), SD_BUS_NO_RESULT,
                                method_forget, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reap", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", counts),
                                method_reap, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("WriteInput", SD_BUS_ARGS("s", id, "ay", data, "b", close), SD_BUS_NO_RESULT,
                                bus_method_write_input, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ResizeTty", SD_BUS_ARGS("s", id, "q", rows, "q", columns), SD_BUS_NO_RESULT,
                                bus_method_resize_tty, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Subscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                bus_method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Unsubscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                bus_method_unsubscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("JobNew", SD_BUS_ARGS("s", id, "o", job), 0),
        SD_BUS_SIGNAL_WITH_ARGS("JobRemoved", SD_BUS_ARGS("s", id, "o", job, "s", status), 0),
        SD_BUS_VTABLE_END
};

int bus_manager_add(BusService *s, sd_bus *bus) {
        return sd_bus_add_object_vtable(bus, NULL, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, manager_vtable, s);
}
