/* SPDX-License-Identifier: MIT */
/* The systemd backend: each job is a transient service under bgrun.slice whose
 * main process is bgrun-supervisor. Type=notify makes systemd's start job
 * finish only once the supervisor says the command is running, so Launch can
 * answer on JobRemoved with result "done". Delegate=yes lets the supervisor
 * split the unit's cgroup into supervisor/ and payload/. */
#include <stdio.h>

#include "build-config.h"
#include "containment.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"

#define UNIT_PREFIX "bgrun-job-"
#define UNIT_SUFFIX ".service"
#define SLICE "bgrun.slice"
/* How long the supervisor may take to set up before systemd gives up. */
#define START_TIMEOUT_USEC (30 * USEC_PER_SEC)
/* A backstop behind the supervisor's own wall-clock limit. */
#define RUNTIME_GRACE_USEC (60 * USEC_PER_SEC)

int job_unit_name(const char *id, char **ret) {
        return asprintf(ret, UNIT_PREFIX "%s" UNIT_SUFFIX, id) < 0 ? -ENOMEM : 0;
}

int job_unit_cgroup(const char *id, char **ret) {
        return asprintf(ret, "/" SLICE "/" UNIT_PREFIX "%s" UNIT_SUFFIX, id) < 0 ? -ENOMEM : 0;
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

        size_t plen = strlen(UNIT_PREFIX), slen = strlen(UNIT_SUFFIX), ulen = strlen(unit);
        if (ulen != plen + JOB_ID_LEN + slen || strncmp(unit, UNIT_PREFIX, plen) != 0 ||
            strcmp(unit + plen + JOB_ID_LEN, UNIT_SUFFIX) != 0)
                return 0;

        char job_id[JOB_ID_MAX];
        memcpy(job_id, unit + plen, JOB_ID_LEN);
        job_id[JOB_ID_LEN] = '\0';

        Job *j = job_table_get(&d->jobs, job_id);
        if (!j || j->phase != JOB_PHASE_STARTING || j->live->spec.mechanism != MECHANISM_SYSTEMD)
                return 0;

        if (streq(result, "done"))
                job_started(j);
        else {
                char msg[256];
                snprintf(msg, sizeof msg, "systemd could not start %s: start job result '%s'", unit, result);
                job_start_failed(j, msg);
        }
        return 0;
}

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Job *j = userdata;
        j->live->start_slot = sd_bus_slot_unref(j->live->start_slot);

        const sd_bus_error *e = sd_bus_message_get_error(reply);
        if (e) {
                char msg[512];
                snprintf(msg, sizeof msg, "systemd refused the job's unit: %s", e->message ?: e->name);
                job_start_failed(j, msg);
        }
        /* On success the answer comes with JobRemoved. */
        return 0;
}

static int append_property_t(sd_bus_message *m, const char *name, uint64_t v) {
        return sd_bus_message_append(m, "(sv)", name, "t", v);
}

static int systemd_start(Job *j) {
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

        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                  "Description", "s", description,
                                  "Slice", "s", SLICE,
                                  "Type", "s", "notify",
                                  "NotifyAccess", "s", "main",
                                  "Delegate", "b", 1,
                                  "CollectMode", "s", "inactive-or-failed",
                                  "KillMode", "s", "control-group",
                                  "TimeoutStartUSec", "t", START_TIMEOUT_USEC);
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

        /* ExecStart: a(sbas) would be wrong; systemd wants a(sasb). */
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0) r = sd_bus_message_append(m, "s", "ExecStart");
        if (r >= 0) r = sd_bus_message_open_container(m, 'v', "a(sasb)");
        if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(sasb)");
        if (r >= 0) r = sd_bus_message_open_container(m, 'r', "sasb");
        if (r >= 0) r = sd_bus_message_append(m, "s", BGRUN_SUPERVISOR_PATH);
        if (r >= 0) r = sd_bus_message_append(m, "as", 5, BGRUN_SUPERVISOR_PATH, "--job", j->id,
                                              "--state-dir", d->state_dir);
        if (r >= 0) r = sd_bus_message_append(m, "b", 0);
        for (int i = 0; r >= 0 && i < 4; i++)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;

        r = sd_bus_message_close_container(m);
        if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;

        return sd_bus_call_async(d->bus, &j->live->start_slot, m, on_start_reply, j, 0);
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
