/* SPDX-License-Identifier: MIT */
/* The connection bgrund serves its API on, and what the lifecycle's
 * notifications become on it: Launch answered, JobNew and JobRemoved
 * emitted, waiting calls answered. */
#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-caller-watch.h"
#include "bus-callers.h"
#include "bus-client.h"
#include "bus-errors.h"
#include "bus-input.h"
#include "bus-job.h"
#include "bus-launch.h"
#include "bus-manager.h"
#include "bus-output.h"
#include "bus-pending.h"
#include "bus-peer.h"
#include "bus-polkit.h"
#include "bus-properties-guard.h"
#include "bus-record.h"
#include "record-keys.h"
#include "bus-listing.h"
#include "bus-service.h"
#include "log.h"

static void answer_launch(Job *j, sd_bus_message *call, void *userdata) {
        char path[BUS_JOB_PATH_MAX];
        (void) sd_bus_reply_method_return(call, "so", j->id, bus_job_path(j->id, path));
}

static void answer_wait(Job *j, sd_bus_message *call, void *userdata) {
        (void) bus_reply_record(j, call);
}

static void answer_kill(Job *j, sd_bus_message *call, void *userdata) {
        (void) bus_reply_kill(j, call, j->status == JOB_KILLED);
}

/* A call about job id finished once what the lifecycle does now is done
 * (it still uses the job after its notification): in the next turn of the
 * loop. */
typedef struct HeldCall {
        BusService *service;
        sd_bus_message *call;
        char id[JOB_ID_MAX];
        void (*finish)(struct HeldCall *h);
} HeldCall;

static int on_held_call(sd_event_source *src, void *userdata) {
        HeldCall *h = userdata;
        h->finish(h);
        sd_bus_message_unref(h->call);
        free(h);
        sd_event_source_disable_unref(src);
        return 0;
}

static void hold_call(BusService *s, Job *j, sd_bus_message *call, void (*finish)(HeldCall *h)) {
        HeldCall *h = calloc(1, sizeof(HeldCall));
        if (h) {
                *h = (HeldCall) { .service = s, .call = sd_bus_message_ref(call), .finish = finish };
                strcpy(h->id, j->id);
        }
        if (!h || sd_event_add_defer(s->runtime->event, NULL, on_held_call, h) < 0) {
                (void) sd_bus_reply_method_errnof(call, ENOMEM, "Cannot answer the call about job %s: %m", j->id);
                if (h)
                        sd_bus_message_unref(h->call);
                free(h);
        }
}

/* A Forget held until the job's end: done once the end is fully told. */
static void finish_forget(HeldCall *h) {
        Job *j = runtime_find_job(h->service->runtime, h->id);
        int r = j ? job_forget(j) : 0; /* gone: another Forget came first */
        if (r < 0)
                (void) sd_bus_reply_method_errnof(h->call, r, "Cannot remove job %s: %m", h->id);
        else
                (void) sd_bus_reply_method_return(h->call, "");
}

static void answer_forget(Job *j, sd_bus_message *call, void *userdata) {
        hold_call(userdata, j, call, finish_forget);
}

/* A Launch that waited on the first Launch of its RequestId, which failed
 * and left no record: served as a Launch of its own, from the start. */
static void finish_launch_again(HeldCall *h) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = sd_bus_message_rewind(h->call, true);
        if (r >= 0)
                r = bus_method_launch(h->call, h->service, &error);
        if (sd_bus_error_is_set(&error))
                (void) sd_bus_reply_method_error(h->call, &error);
        else if (r < 0)
                (void) sd_bus_reply_method_errnof(h->call, r, "Cannot launch the job: %m");
}

static void launch_again(Job *j, sd_bus_message *call, void *userdata) {
        hold_call(userdata, j, call, finish_launch_again);
}

typedef struct Refusal {
        int error;
        const char *message;
} Refusal;

static void refuse_launch(Job *j, sd_bus_message *call, void *userdata) {
        const Refusal *f = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        if (f->error == BGRUN_ERROR(START_FAILED))
                (void) bus_error_set(&e, f->error, "No containment for the job (%s); nothing was run", f->message);
        else if (f->error == -EINVAL)
                (void) bus_error_set(&e, f->error, "The job was refused (%s); nothing was run", f->message);
        else if (bgrun_error_code(f->error))
                (void) bus_error_set(&e, f->error, "%s", f->message);
        else
                (void) bus_error_set(&e, f->error, "The job could not start (%s; %s); nothing was run", f->message,
                                     strerror(-f->error));
        (void) sd_bus_reply_method_error(call, &e);
}

static void refuse_never_started(Job *j, sd_bus_message *call, void *userdata) {
        (void) sd_bus_reply_method_errorf(call, BGRUN_ERROR_NO_SUCH_JOB, "No such job: %s never started", j->id);
}

/* --- signals: each goes only to subscribed connections that may see it -- */

typedef int (*SignalBuilder)(sd_bus_message *m, BusService *s, Job *j);

/* Send one copy of a signal about j (NULL: about no job, for every
 * subscriber) to each subscriber allowed to see j, never a broadcast that
 * another user's match rule could receive. */
static void emit(BusService *s, Job *j, const char *path, const char *interface, const char *member,
                 SignalBuilder build) {
        for (BusClient *c = s->subscribers; c; c = c->subscriber_next) {
                if (j && !c->admin && c->uid != j->owner)
                        continue;
                if (c->direct && !bus_peer_may_send(s, c->bus))
                        continue;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                int r = sd_bus_message_new_signal(c->bus, &m, path, interface, member);
                /* On a direct connection it reaches that peer only anyway. */
                if (r >= 0 && !c->direct)
                        r = sd_bus_message_set_destination(m, c->name);
                if (r >= 0)
                        r = build(m, s, j);
                if (r >= 0)
                        r = sd_bus_send(c->bus, m, NULL);
                if (r < 0)
                        log_debug("Cannot send %s to %s: %s", member, c->name, strerror(-r));
        }
}

static int build_job_new(sd_bus_message *m, BusService *s, Job *j) {
        char path[BUS_JOB_PATH_MAX];
        return sd_bus_message_append(m, "so", j->id, bus_job_path(j->id, path));
}

static int build_job_removed(sd_bus_message *m, BusService *s, Job *j) {
        char path[BUS_JOB_PATH_MAX];
        return sd_bus_message_append(m, "sos", j->id, bus_job_path(j->id, path), job_status_to_string(j->status));
}

/* The job's state changed: every property but the counters. */
static int build_job_properties_changed(sd_bus_message *m, BusService *s, Job *j) {
        JobView v;
        int r = job_view(j, &v);
        if (r >= 0) r = sd_bus_message_append(m, "s", BGRUN_JOB_INTERFACE);
        if (r >= 0) r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (size_t i = 0; r >= 0 && i < _RECORD_KEY_MAX; i++) {
                if (record_key_is_counter(i))
                        continue;
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0) r = sd_bus_message_append_basic(m, 's', record_keys[i].name);
                if (r >= 0) r = sd_bus_message_open_container(m, 'v', record_keys[i].signature);
                if (r >= 0) r = record_appenders[i](m, &v);
                if (r >= 0) r = sd_bus_message_close_container(m);
                if (r >= 0) r = sd_bus_message_close_container(m);
        }
        if (r >= 0) r = sd_bus_message_close_container(m);
        if (r >= 0) r = sd_bus_message_append(m, "as", 0);
        return r;
}

static int build_running_jobs_changed(sd_bus_message *m, BusService *s, Job *j) {
        return sd_bus_message_append(m, "sa{sv}as", BGRUN_MANAGER_INTERFACE, 1, "RunningJobs", "u",
                                     (uint32_t) s->runtime->n_running, 0);
}

static void on_job_new(void *userdata, Job *j) {
        emit(userdata, j, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, "JobNew", build_job_new);
}

static void on_job_running(void *userdata, Job *j) {
        pending_calls_answer(userdata, j, PENDING_LAUNCH, answer_launch, NULL);
        pending_calls_answer(userdata, j, PENDING_LAUNCH_SAME, answer_launch, NULL);
        /* A queued job's subscribers heard of it (JobNew) as queued. */
        if (j->answered_queued) {
                char path[BUS_JOB_PATH_MAX];
                emit(userdata, j, bus_job_path(j->id, path), "org.freedesktop.DBus.Properties", "PropertiesChanged",
                     build_job_properties_changed);
        }
}

/* Kill and Stop answer now; the status changed (a wall-clock limit's
 * timed_out is public from here). */
static void on_job_confirmed(void *userdata, Job *j) {
        BusService *s = userdata;
        char path[BUS_JOB_PATH_MAX];
        bus_job_path(j->id, path);
        pending_calls_answer(userdata, j, PENDING_KILL, answer_kill, NULL);
        pending_kill_session_job_ended(userdata, j);
        emit(s, j, path, "org.freedesktop.DBus.Properties", "PropertiesChanged", build_job_properties_changed);
}

static void on_job_ended(void *userdata, Job *j) {
        BusService *s = userdata;
        bus_caller_watch_job_done(s, j);
        char path[BUS_JOB_PATH_MAX];
        bus_job_path(j->id, path);

        /* A job that failed during setup still exists: Launch names it. */
        pending_calls_answer(userdata, j, PENDING_LAUNCH, answer_launch, NULL);
        pending_calls_answer(userdata, j, PENDING_LAUNCH_SAME, answer_launch, NULL);
        emit(s, j, path, "org.freedesktop.DBus.Properties", "PropertiesChanged", build_job_properties_changed);
        emit(s, j, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE, "JobRemoved", build_job_removed);
        pending_calls_answer(userdata, j, PENDING_KILL, answer_kill, NULL);
        pending_calls_answer(userdata, j, PENDING_WAIT, answer_wait, NULL);
        bus_output_ended(userdata, j);
        pending_kill_session_job_ended(userdata, j);
        pending_calls_answer(userdata, j, PENDING_FORGET, answer_forget, userdata);
        bus_input_ready(userdata, j);
}

static void on_output_grew(void *userdata, Job *j) {
        bus_output_grew(userdata, j);
}

static void on_input_ready(void *userdata, Job *j) {
        bus_input_ready(userdata, j);
}

static void on_job_discarded(void *userdata, Job *j, int error, const char *message) {
        bus_caller_watch_job_done(userdata, j);
        /* Kill or Wait calls made while it was starting: it never existed. */
        pending_calls_answer(userdata, j, PENDING_KILL, refuse_never_started, NULL);
        pending_calls_answer(userdata, j, PENDING_WAIT, refuse_never_started, NULL);
        pending_calls_answer(userdata, j, PENDING_OUTPUT, refuse_never_started, NULL);
        pending_kill_session_job_ended(userdata, j);
        pending_calls_answer(userdata, j, PENDING_LAUNCH, refuse_launch, &(Refusal) { error, message });
        pending_calls_answer(userdata, j, PENDING_LAUNCH_SAME, launch_again, userdata);
}

static void on_job_freed(void *userdata, Job *j) {
        /* Every call is answered before its job goes; none may outlive it. */
        pending_calls_drop(userdata, j);
        bus_listings_job_leaves(userdata, j);
}

static void on_job_unlisted(void *userdata, Job *j) {
        bus_listings_job_leaves(userdata, j);
}

static void on_running_jobs_changed(void *userdata) {
        BusService *s = userdata;
        emit(s, NULL, BGRUN_MANAGER_PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged",
             build_running_jobs_changed);
}

static const JobNotifier bus_notifier = {
        .job_new = on_job_new,
        .job_running = on_job_running,
        .job_confirmed = on_job_confirmed,
        .job_ended = on_job_ended,
        .job_discarded = on_job_discarded,
        .input_ready = on_input_ready,
        .output_grew = on_output_grew,
        .running_jobs_changed = on_running_jobs_changed,
        .job_freed = on_job_freed,
        .job_unlisted = on_job_unlisted,
};

/* What one write to the bus may hand the kernel (which doubles it): a long
 * answer (a listing of thousands of jobs, a ReadOutput of megabytes) then
 * leaves in pieces, one a turn of the loop, with other callers' messages
 * served between them, instead of in one copy that held the loop up to
 * 1.3 ms (the 0.5 MB answer of a 5,000-record listing; sd-bus asks 8 MB). */
#define BUS_SNDBUF_BYTES (128 * 1024)

static int bus_connect(bool user, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *address = getenv("BGRUN_BUS_ADDRESS");
        int r;
        if (address) {
                r = sd_bus_new(&bus);
                if (r >= 0) r = sd_bus_set_address(bus, address);
                if (r >= 0) r = sd_bus_set_bus_client(bus, true);
                if (r >= 0) r = sd_bus_start(bus);
        } else
                r = user ? sd_bus_open_user(&bus) : sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        int fd = sd_bus_get_fd(bus), size = BUS_SNDBUF_BYTES;
        if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size) < 0)
                log_warning_errno(errno, "Cannot bound the bus socket's send buffer; long answers go out whole: %m");
        *ret = TAKE_PTR(bus);
        return 0;
}

int bus_service_add_objects(BusService *s, sd_bus *bus) {
        /* Added after the other filters, so it runs before them. */
        int r = bus_properties_guard_add(bus);
        if (r < 0)
                return log_error_errno(r, "Failed to guard the Properties interface: %m");
        r = bus_manager_add(s, bus);
        if (r < 0)
                return log_error_errno(r, "Failed to register the manager object: %m");
        r = bus_job_objects_add(s, bus);
        if (r < 0)
                return log_error_errno(r, "Failed to register the job objects: %m");
        return 0;
}

int bus_service_new(BusService **ret, Runtime *rt, const char *listen_address) {
        _cleanup_(bus_service_freep) BusService *s = calloc(1, sizeof(BusService));
        if (!s)
                return -ENOMEM;
        s->runtime = rt;
        s->listen_address = listen_address;
        int r = bus_authority_new(s, &s->authority);
        if (r < 0)
                return r;

        r = bus_connect(rt->user_instance, &s->bus);
        if (r < 0 && listen_address) {
                /* A container: the socket is the only way in. */
                log_info_errno(r, "No bus to serve on (%m); serving %s only", listen_address);
                s->bus = NULL;
        } else if (r < 0)
                return log_error_errno(r, "Failed to connect to the %s bus: %m", rt->user_instance ? "session" : "system");
        else {
                /* Losing the bus is an error exit, so that systemd's Restart=
                 * brings bgrund back; the jobs never depended on it. */
                r = sd_bus_set_exit_on_disconnect(s->bus, true);
                if (r >= 0)
                        r = sd_bus_attach_event(s->bus, rt->event, 0);
                if (r >= 0)
                        r = bus_authority_prefetch_creds(s->authority, s->bus);
                if (r >= 0)
                        r = bus_polkit_attach(s, s->bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
                r = bus_service_add_objects(s, s->bus);
                if (r < 0)
                        return r;
        }
        /* A user's instance serves its user alone, on the bus and the socket. */
        if (rt->user_instance)
                bus_authority_serve_only(s->authority, geteuid());

        runtime_set_notifier(rt, &bus_notifier, s);
        *ret = TAKE_PTR(s);
        return 0;
}

BusService *bus_service_free(BusService *s) {
        if (!s)
                return NULL;
        pending_calls_drop_all(s);
        bus_listings_free(s);
        if (s->runtime)
                runtime_set_notifier(s->runtime, NULL, NULL);
        /* First: connections that close as bgrund goes stop no job. */
        bus_callers_free(s);
        bus_clients_unbind(s);
        bus_peer_server_free(s);
        bus_clients_free(s);
        bus_polkit_queries_free(s);
        bus_authority_free(s->authority);
        sd_bus_flush_close_unref(s->bus);
        free(s);
        return NULL;
}

int bus_service_start(BusService *s) {
        int r = bus_callers_start(s);
        if (r >= 0)
                r = bus_caller_watch_start(s);
        if (r < 0)
                return r;
        /* Serve last, so no caller ever sees a half-loaded daemon. */
        if (!s->bus)
                return 0;
        r = sd_bus_request_name(s->bus, BGRUN_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire the bus name %s: %m", BGRUN_BUS_NAME);
        return 0;
}
