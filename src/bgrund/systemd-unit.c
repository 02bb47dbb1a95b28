/* SPDX-License-Identifier: MIT */
/* The systemd backend: each job is a transient scope under bgrun.slice. bgrund
 * spawns the supervisor held (supervisor-spawn.c), asks systemd for a scope
 * holding that PID, and lets the supervisor go once the scope's start job is
 * done: the supervisor then runs the command inside the scope and reports
 * readiness. A scope, unlike a service, costs PID 1 no fork and exec, so
 * launching is several milliseconds faster. Delegate=yes lets the
 * supervisor split the scope's cgroup into supervisor/ and payload/. */
#include <stdio.h>

#include "containment.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "supervisor-spawn.h"

#define UNIT_PREFIX "bgrun-job-"
#define UNIT_SUFFIX ".scope"
/* A backstop behind the supervisor's own wall-clock limit. */
#define RUNTIME_GRACE_USEC (60 * USEC_PER_SEC)

int job_unit_name(const char *id, char **ret) {
        return asprintf(ret, UNIT_PREFIX "%s" UNIT_SUFFIX, id) < 0 ? -ENOMEM : 0;
}

bool job_id_from_unit_name(const char *unit, char ret[static JOB_ID_MAX]) {
        size_t plen = strlen(UNIT_PREFIX), slen = strlen(UNIT_SUFFIX), ulen = strlen(unit);
        if (ulen != plen + JOB_ID_LEN + slen || strncmp(unit, UNIT_PREFIX, plen) != 0 ||
            strcmp(unit + plen + JOB_ID_LEN, UNIT_SUFFIX) != 0)
                return false;
        memcpy(ret, unit + plen, JOB_ID_LEN);
        ret[JOB_ID_LEN] = '\0';
        return job_id_is_valid(ret);
}

int job_unit_cgroup(const char *id, char **ret) {
        return asprintf(ret, JOB_SLICE_CGROUP "/" UNIT_PREFIX "%s" UNIT_SUFFIX, id) < 0 ? -ENOMEM : 0;
}

static bool systemd_available(Daemon *d) {
        return d->systemd_available;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Daemon *d = userdata;
        const char *job_path, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(m, "uoss", &id, &job_path, &unit, &result) < 0)
                return 0;

        char job_id[JOB_ID_MAX];
        if (!job_id_from_unit_name(unit, job_id))
                return 0;

        /* The scope's start job is over: systemd will not move the
         * supervisor's PID anywhere any more. */
        supervisor_unpin(d, job_id);

        Job *j = job_table_get(&d->jobs, job_id);
        /* Only the scope's start job matters, once. */
        if (!j || j->phase != JOB_PHASE_STARTING || j->live->spec.mechanism != MECHANISM_SYSTEMD || j->live->let_go)
                return 0;

        /* The supervisor is in the scope now: let it run the command. Its
         * readiness (or its failure) comes through its own pipe. */
        char msg[256];
        int r;
        if (!streq(result, "done"))
                snprintf(msg, sizeof msg, "systemd could not start %s: start job result '%s'", unit, result);
        else if ((r = supervisor_let_go(j)) < 0)
                snprintf(msg, sizeof msg, "the supervisor was gone when %s was ready: %s", unit, strerror(-r));
        else
                return 0;
        job_start_failed(j, msg);
        return 0;
}

/* The StartTransientUnit call outlives its job if need be: its answer still
 * says whether systemd will ever move the supervisor's PID. */
typedef struct StartCall {
        Daemon *daemon;
        char job_id[JOB_ID_MAX];
} StartCall;

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_free_ StartCall *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        if (!e)
                return 0; /* the rest comes with JobRemoved */

        /* Refused: no scope, no start job, the PID stays where it is. No
         * answer in time is no such promise: systemd may still act on the
         * call, and its JobRemoved will unpin. */
        if (!sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY))
                supervisor_unpin(c->daemon, c->job_id);
        Job *j = job_table_get(&c->daemon->jobs, c->job_id);
        if (j && j->phase == JOB_PHASE_STARTING && j->live->spec.mechanism == MECHANISM_SYSTEMD && !j->live->let_go) {
                char msg[512];
                snprintf(msg, sizeof msg, "systemd refused the job's unit: %s", e->message ?: e->name);
                job_start_failed(j, msg);
        }
        return 0;
}

static int append_property_t(sd_bus_message *m, const char *name, uint64_t v) {
        return sd_bus_message_append(m, "(sv)", name, "t", v);
}

static int start_transient_scope(Job *j, pid_t pid) {
        Daemon *d = j->daemon;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(d->bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", j->live->spec.unit, "fail");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;

        char description[160];
        snprintf(description, sizeof description, "bgrun job %s: %.100s", j->id, j->live->spec.command);

        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)",
                                  "Description", "s", description,
                                  "Slice", "s", JOB_SLICE,
                                  "Delegate", "b", 1,
                                  "CollectMode", "s", "inactive-or-failed",
                                  "KillMode", "s", "control-group",
                                  "PIDs", "au", 1, (uint32_t) pid);
        if (r < 0)
                return r;

        if (j->live->spec.max_runtime_usec > 0 && j->live->spec.max_runtime_usec < UINT64_MAX - RUNTIME_GRACE_USEC) {
                r = append_property_t(m, "RuntimeMaxUSec", j->live->spec.max_runtime_usec + RUNTIME_GRACE_USEC);
                if (r < 0)
                        return r;
        }
        if (j->live->limits.memory_max > 0 && (r = append_property_t(m, "MemoryMax", j->live->limits.memory_max)) < 0)
                return r;
        if (j->live->limits.tasks_max > 0 && (r = append_property_t(m, "TasksMax", j->live->limits.tasks_max)) < 0)
                return r;
        if (j->live->limits.cpu_quota_per_sec_usec > 0 &&
            (r = append_property_t(m, "CPUQuotaPerSecUSec", j->live->limits.cpu_quota_per_sec_usec)) < 0)
                return r;

        r = sd_bus_message_close_container(m);
        if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;

        StartCall *c = malloc(sizeof(StartCall));
        if (!c)
                return -ENOMEM;
        c->daemon = d;
        strcpy(c->job_id, j->id);
        /* A floating slot: the bus owns it until the answer comes. */
        r = sd_bus_call_async(d->bus, NULL, m, on_start_reply, c, 0);
        if (r < 0)
                free(c);
        return r;
}

static int systemd_start(Job *j) {
        pid_t pid;
        int r = supervisor_spawn(j, true, &pid);
        if (r < 0)
                return r;
        r = start_transient_scope(j, pid);
        if (r < 0) {
                /* Never sent: systemd will not move it. */
                supervisor_abort(j);
                supervisor_unpin(j->daemon, j->id);
        }
        return r;
}

static int on_subscribed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Daemon *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        d->systemd_available = !e;
        if (e)
                log_warning("systemd is not reachable (%s): the systemd mechanism is off", e->message ?: e->name);
        return 0;
}

int systemd_unit_setup(Daemon *d) {
        int r = sd_bus_match_signal_async(d->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                          "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed,
                                          NULL, d);
        if (r < 0)
                return r;
        /* Until the answer arrives, assume systemd is there: a Launch that
         * races it fails cleanly through on_start_reply anyway. */
        d->systemd_available = true;
        return sd_bus_call_method_async(d->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                        "org.freedesktop.systemd1.Manager", "Subscribe", on_subscribed, d, "");
}

const ContainmentBackend systemd_backend = {
        .mechanism = MECHANISM_SYSTEMD,
        .contains = true,
        .available = systemd_available,
        .start = systemd_start,
};
