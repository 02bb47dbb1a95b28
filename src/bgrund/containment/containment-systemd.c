/* SPDX-License-Identifier: MIT */
/* The systemd mechanism: each job is a transient scope in its owner's slice,
 * created through systemd's D-Bus API on a connection of its own (bgrund
 * --user: through the user's own manager on the session bus, in its
 * bgrun.slice, inside the subtree delegated to that manager). job.c
 * spawns the supervisor held and pinned; this asks systemd for a scope
 * holding that PID, and once the scope's start job is done (JobRemoved)
 * the containment is ready. A scope, unlike a service, costs PID 1 no fork
 * and exec, so launching is several milliseconds faster. Delegate=yes lets
 * the supervisor split the scope's cgroup into supervisor/ and payload/. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

#include "bus-sender.h"
#include "cgroup.h"
#include "containment.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

/* Done with the PID of job_id's supervisor, which this mechanism asked
 * to be pinned (SpawnPlan.pin): the host is told, if it listens. */
static void unpin(Containment *c, const char *job_id) {
        if (c->host->unpin)
                c->host->unpin(c->host->userdata, job_id);
}

#define UNIT_PREFIX "bgrun-job-"
#define UNIT_SUFFIX ".scope"
/* Each owner's jobs run in the slice of its uid, a child of user-UID.slice,
 * so the limits an administrator set for the user apply too; [Limits] sets
 * TasksMax=, MemoryMax= and CPUWeight= on it. Records from before kept
 * their scopes in bgrun.slice; the reaper still looks there. */
#define OWNER_SLICE_FORMAT "user-%u-bgrun.slice"
#define OWNER_SLICE_CGROUP_FORMAT "/user.slice/user-%u.slice/user-%u-bgrun.slice"
#define LEGACY_SLICE_CGROUP "/bgrun.slice"
/* bgrund --user: one owner, one slice of the user's manager. */
#define USER_SLICE "bgrun.slice"
/* A backstop behind the supervisor's own wall-clock limit. */
#define RUNTIME_GRACE_USEC (60 * USEC_PER_SEC)

typedef struct SystemdState {
        sd_bus *bus;     /* to systemd, apart from the one the API is served on */
        BusNameOwner systemd; /* whose JobRemoved is systemd's */
        bool reachable;  /* Subscribe() was answered, or not answered yet */
        char *user_slice_cgroup; /* bgrund --user: the cgroup of the manager's bgrun.slice */
        uid_t *sliced;   /* owners whose slice this bgrund has set up */
        size_t n_sliced;
} SystemdState;

static SystemdState *state(Containment *c) {
        return c->data;
}

static int unit_name(const char *id, char **ret) {
        return asprintf(ret, UNIT_PREFIX "%s" UNIT_SUFFIX, id) < 0 ? -ENOMEM : 0;
}

static int unit_cgroup(Containment *c, uid_t owner, const char *id, char **ret) {
        if (state(c) && state(c)->user_slice_cgroup)
                return asprintf(ret, "%s/" UNIT_PREFIX "%s" UNIT_SUFFIX, state(c)->user_slice_cgroup, id) < 0 ? -ENOMEM : 0;
        return asprintf(ret, OWNER_SLICE_CGROUP_FORMAT "/" UNIT_PREFIX "%s" UNIT_SUFFIX, (unsigned) owner,
                        (unsigned) owner, id) < 0 ? -ENOMEM : 0;
}

static void owner_slice(Containment *c, uid_t owner, char buf[static 64]) {
        if (state(c)->user_slice_cgroup)
                strcpy(buf, USER_SLICE);
        else
                snprintf(buf, 64, OWNER_SLICE_FORMAT, (unsigned) owner);
}

/* The id in "bgrun-job-<id>.scope"; false for any other name. */
static bool id_from_unit_name(const char *unit, char ret[static JOB_ID_MAX]) {
        size_t plen = strlen(UNIT_PREFIX), slen = strlen(UNIT_SUFFIX), ulen = strlen(unit);
        if (ulen != plen + JOB_ID_LEN + slen || strncmp(unit, UNIT_PREFIX, plen) != 0 ||
            strcmp(unit + plen + JOB_ID_LEN, UNIT_SUFFIX) != 0)
                return false;
        memcpy(ret, unit + plen, JOB_ID_LEN);
        ret[JOB_ID_LEN] = '\0';
        return job_id_is_valid(ret);
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Containment *c = userdata;
        const char *job_path, *unit, *result;
        uint32_t id;

        /* Any user may send this connection a JobRemoved of its own, and
         * unit names are public: only systemd's own is believed. */
        if (!bus_name_owner_sent(&state(c)->systemd, m)) {
                log_debug("Ignoring a JobRemoved from %s, which is not systemd",
                          sd_bus_message_get_sender(m) ?: "(no sender)");
                return 0;
        }
        if (sd_bus_message_read(m, "uoss", &id, &job_path, &unit, &result) < 0)
                return 0;
        char job_id[JOB_ID_MAX];
        if (!id_from_unit_name(unit, job_id))
                return 0;

        /* The scope's start job is over: systemd will not move the
         * supervisor's PID anywhere any more. */
        unpin(c, job_id);

        /* Only the scope's start job matters, once: the host acts only on a
         * job that still awaits it. */
        if (streq(result, "done")) {
                c->host->ready(c->host->userdata, job_id, MECHANISM_SYSTEMD);
                return 0;
        }
        char msg[256];
        snprintf(msg, sizeof msg, "systemd could not start %s: start job result '%.32s'", unit, result);
        c->host->failed(c->host->userdata, job_id, MECHANISM_SYSTEMD, true, msg);
        return 0;
}

/* The StartTransientUnit call outlives its job if need be: its answer still
 * says whether systemd will ever move the supervisor's PID. */
typedef struct StartCall {
        Containment *containment;
        char job_id[JOB_ID_MAX];
} StartCall;

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_free_ StartCall *call = userdata;
        Containment *c = call->containment;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        if (!e)
                return 0; /* the rest comes with JobRemoved */

        /* Refused: no scope, no start job, the PID stays where it is. No
         * answer in time is no such promise: systemd may still act on the
         * call, and its JobRemoved will unpin. */
        if (!sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY))
                unpin(c, call->job_id);
        char msg[512];
        snprintf(msg, sizeof msg, "systemd refused the job's unit: %.400s", e->message ?: e->name);
        /* Refused for what it was asked is the request's fault, and no
         * weaker mechanism may take the job for it. */
        c->host->failed(c->host->userdata, call->job_id, MECHANISM_SYSTEMD,
                        !sd_bus_error_has_name(e, SD_BUS_ERROR_INVALID_ARGS), msg);
        return 0;
}

static int append_property_t(sd_bus_message *m, const char *name, uint64_t v) {
        return sd_bus_message_append(m, "(sv)", name, "t", v);
}

/* The owner's slice with [Limits]'s TasksMax=, MemoryMax=, CPUWeight=. */
static int append_slice_limits(Containment *c, sd_bus_message *m) {
        const BgrunLimits *l = &c->host->config->limits;
        int r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0) r = append_property_t(m, "TasksMax", l->tasks_max);
        if (r >= 0) r = append_property_t(m, "MemoryMax", l->memory_max);
        if (r >= 0) r = append_property_t(m, "CPUWeight", l->cpu_weight);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

static int on_slice_properties_set(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        if (e)
                log_warning("Cannot set the limits of an owner's slice: %s", e->message ?: e->name);
        return 0;
}

typedef struct SliceCall {
        Containment *containment;
        uid_t owner;
} SliceCall;

static int on_slice_started(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_free_ SliceCall *call = userdata;
        Containment *c = call->containment;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        if (!e)
                return 0;
        /* Made by an earlier bgrund: give it this configuration's limits. */
        char slice[64];
        owner_slice(c, call->owner, slice);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(state(c)->bus, &m, "org.freedesktop.systemd1",
                                               "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                               "SetUnitProperties");
        if (r >= 0) r = sd_bus_message_append(m, "sb", slice, 1);
        if (r >= 0) r = append_slice_limits(c, m);
        if (r >= 0) r = sd_bus_call_async(state(c)->bus, NULL, m, on_slice_properties_set, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Cannot set the limits of %s: %m", slice);
        return 0;
}

/* Once per owner and bgrund: the owner's slice as a transient unit with the
 * limits, before its first scope; systemd handles calls on one connection
 * in order, so the scope's StartTransientUnit comes after. */
static int ensure_owner_slice(Containment *c, uid_t owner, const char *slice) {
        SystemdState *s = state(c);
        for (size_t i = 0; i < s->n_sliced; i++)
                if (s->sliced[i] == owner)
                        return 0;

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(s->bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0) r = sd_bus_message_append(m, "ss", slice, "fail");
        if (r >= 0) r = append_slice_limits(c, m);
        if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        uid_t *p = reallocarray(s->sliced, s->n_sliced + 1, sizeof(uid_t));
        SliceCall *call = malloc(sizeof(SliceCall));
        if (p)
                s->sliced = p;
        if (!p || !call) {
                free(call);
                return -ENOMEM;
        }
        *call = (SliceCall) { .containment = c, .owner = owner };
        r = sd_bus_call_async(s->bus, NULL, m, on_slice_started, call, 0);
        if (r < 0) {
                free(call);
                return r;
        }
        s->sliced[s->n_sliced++] = owner;
        return 0;
}

static int systemd_start(Containment *c, const ContainmentJob *j, pid_t pid) {
        const JobSpec *spec = j->spec;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        char slice[64];
        owner_slice(c, spec->owner, slice);
        r = ensure_owner_slice(c, spec->owner, slice);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_call(state(c)->bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0) r = sd_bus_message_append(m, "ss", spec->unit, "fail");
        if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;

        /* The id only: every user can read a unit's description, and the
         * command is the job's owner's business. */
        char description[64];
        snprintf(description, sizeof description, "bgrun job %s", j->id);
        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)",
                                  "Description", "s", description,
                                  "Slice", "s", slice,
                                  "Delegate", "b", 1,
                                  "CollectMode", "s", "inactive-or-failed",
                                  "KillMode", "s", "control-group",
                                  "PIDs", "au", 1, (uint32_t) pid);
        /* After the limit the job has its stop's grace to exit, then the
         * supervisor kills it: the backstop comes after both. */
        uint64_t backstop = RUNTIME_GRACE_USEC + spec->stop_grace_usec;
        if (r >= 0 && spec->max_runtime_usec > 0 && spec->max_runtime_usec < UINT64_MAX - backstop)
                r = append_property_t(m, "RuntimeMaxUSec", spec->max_runtime_usec + backstop);
        if (r >= 0 && spec->memory_max > 0)
                r = append_property_t(m, "MemoryMax", spec->memory_max);
        if (r >= 0 && spec->tasks_max > 0)
                r = append_property_t(m, "TasksMax", spec->tasks_max);
        if (r >= 0 && spec->cpu_quota_per_sec_usec > 0)
                r = append_property_t(m, "CPUQuotaPerSecUSec", spec->cpu_quota_per_sec_usec);
        if (r >= 0) r = sd_bus_message_close_container(m);
        if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;

        StartCall *call = malloc(sizeof(StartCall));
        if (!call)
                return -ENOMEM;
        *call = (StartCall) { .containment = c };
        strcpy(call->job_id, j->id);
        /* A floating slot: the bus owns it until the answer comes. */
        r = sd_bus_call_async(state(c)->bus, NULL, m, on_start_reply, call, 0);
        if (r < 0) {
                free(call);
                /* Never sent: systemd will not move it. */
                unpin(c, j->id);
        }
        return r < 0 ? r : 0;
}

static int systemd_prepare(Containment *c, const ContainmentJob *j, SpawnPlan *ret) {
        /* systemd moves the supervisor by PID: it must not be recycled. */
        *ret = SPAWN_PLAN_NULL;
        ret->pin = true;
        return 0;
}

static int systemd_verify(Containment *c, const ContainmentJob *j, pid_t pid) {
        _cleanup_free_ char *expected = NULL, *actual = NULL;
        int r = unit_cgroup(c, j->spec->owner, j->id, &expected);
        if (r >= 0)
                r = cgroup_path_of_pid(pid, &actual);
        return r < 0 ? r : streq(expected, actual);
}

static int systemd_describe(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup) {
        _cleanup_free_ char *unit = NULL, *cgroup = NULL;
        int r = unit_name(spec->id, &unit);
        if (r >= 0)
                r = unit_cgroup(c, spec->owner, spec->id, &cgroup);
        if (r < 0)
                return r;
        *ret_unit = TAKE_PTR(unit);
        *ret_cgroup = TAKE_PTR(cgroup);
        return 0;
}

/* Job scopes with processes in the slice at path, onto ids and cgroups. */
static int list_slice(const char *path, char ***ids, char ***cgroups, size_t *n) {
        _cleanup_close_ int slice_fd = -EBADF;
        if (cgroup_open(path, &slice_fd) < 0)
                return 0; /* no slice: no job scope */
        _cleanup_closedir_ DIR *dir = fdopendir(dup(slice_fd));
        if (!dir)
                return negative_errno();
        struct dirent *de;
        while ((de = readdir(dir))) {
                char id[JOB_ID_MAX];
                if (!id_from_unit_name(de->d_name, id))
                        continue;
                _cleanup_close_ int fd = openat(slice_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || cgroup_is_populated(fd) != 1)
                        continue;
                char *cgroup = NULL;
                size_t n_cgroups = *n;
                int r = strv_consume(ids, n, strdup(id));
                if (r >= 0)
                        r = strv_consume(cgroups, &n_cgroups, asprintf(&cgroup, "%s/%s", path, de->d_name) < 0 ? NULL : cgroup);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int systemd_list(Containment *c, char ***ret_ids, char ***ret_cgroups) {
        _cleanup_strv_free_ char **ids = calloc(1, sizeof(char *)), **cgroups = calloc(1, sizeof(char *));
        if (!ids || !cgroups)
                return -ENOMEM;
        size_t n = 0;
        if (c->host->user_instance) {
                /* Only the user's manager's bgrun.slice is this instance's
                 * (none while that manager is out of reach). */
                int r = state(c) ? list_slice(state(c)->user_slice_cgroup, &ids, &cgroups, &n) : 0;
                if (r < 0)
                        return r;
                *ret_ids = TAKE_PTR(ids);
                *ret_cgroups = TAKE_PTR(cgroups);
                return 0;
        }
        int r = list_slice(LEGACY_SLICE_CGROUP, &ids, &cgroups, &n);
        if (r < 0)
                return r;

        /* Every owner's slice: /user.slice/user-UID.slice/user-UID-bgrun.slice */
        _cleanup_closedir_ DIR *users = NULL;
        _cleanup_close_ int users_fd = -EBADF;
        if (cgroup_open("/user.slice", &users_fd) >= 0)
                users = fdopendir(TAKE_FD(users_fd));
        struct dirent *de;
        while (users && (de = readdir(users))) {
                unsigned uid;
                char tail;
                if (sscanf(de->d_name, "user-%u.slice%c", &uid, &tail) != 1)
                        continue;
                char path[128];
                snprintf(path, sizeof path, OWNER_SLICE_CGROUP_FORMAT, uid, uid);
                r = list_slice(path, &ids, &cgroups, &n);
                if (r < 0)
                        return r;
        }
        *ret_ids = TAKE_PTR(ids);
        *ret_cgroups = TAKE_PTR(cgroups);
        return 0;
}

static int systemd_identify(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]) {
        /* A job's processes are in .../bgrun-job-<id>.scope/payload[/...]. */
        for (const char *p = strstr(cgroup, "/" UNIT_PREFIX); p; p = strstr(p + 1, "/" UNIT_PREFIX)) {
                const char *end = strchr(p + 1, '/');
                size_t len = end ? (size_t) (end - p - 1) : strlen(p + 1);
                char name[64];
                if (len >= sizeof name)
                        continue;
                memcpy(name, p + 1, len);
                name[len] = '\0';
                if (id_from_unit_name(name, ret_id))
                        return 1;
        }
        return 0;
}

static void systemd_cleanup(Containment *c, const char *cgroup, bool released) {
        /* systemd collects an empty scope by itself, but not one whose
         * supervisor was gone before the scope had started: after a release,
         * stop what is still there. */
        _cleanup_close_ int fd = -EBADF;
        if (!released || !state(c) || cgroup_open(cgroup, &fd) < 0 || cgroup_is_populated(fd) != 0)
                return;
        const char *unit = strrchr(cgroup, '/');
        char id[JOB_ID_MAX];
        if (!unit || !id_from_unit_name(unit + 1, id))
                return;
        int r = sd_bus_call_method_async(state(c)->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "StopUnit", NULL, NULL, "ss", unit + 1,
                                         "replace");
        if (r < 0)
                log_debug_errno(r, "Cannot stop %s: %m", unit + 1);
}

static int systemd_find_supervisor(Containment *c, const char *cgroup, PidRef *ret) {
        return containment_cgroup_supervisor(cgroup, ret);
}

static bool systemd_available(Containment *c) {
        return state(c)->reachable;
}

static int on_subscribed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Containment *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        state(c)->reachable = !e;
        if (e)
                log_warning("systemd is not reachable (%s): the systemd mechanism is off", e->message ?: e->name);
        return 0;
}

/* bgrund --user: the cgroup of the user's manager, which it was delegated,
 * and so of its bgrun.slice, where the jobs' scopes go. */
static int find_user_slice(SystemdState *s) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *manager = NULL;
        int r = sd_bus_get_property_string(s->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "ControlGroup", &error, &manager);
        if (r < 0)
                return log_warning_errno(r, "The user's systemd manager does not answer (%s)",
                                         error.message ?: strerror(-r));
        if (manager[0] != '/')
                return log_warning_errno(-ENOMEDIUM, "The user's systemd manager has no cgroup of its own");
        char *slice;
        if (asprintf(&slice, "%s/" USER_SLICE, streq(manager, "/") ? "" : manager) < 0)
                return -ENOMEM;
        s->user_slice_cgroup = slice;
        return 0;
}

static int systemd_init(Containment *c) {
        _cleanup_free_ SystemdState *s = calloc(1, sizeof(SystemdState));
        if (!s)
                return -ENOMEM;
        int r = c->host->user_instance ? sd_bus_open_user(&s->bus) : sd_bus_open_system(&s->bus);
        if (r < 0)
                return r;
        if (c->host->user_instance) {
                r = find_user_slice(s);
                if (r < 0) {
                        sd_bus_flush_close_unref(s->bus);
                        return r;
                }
                log_info("Jobs run in %s of the user's systemd manager", s->user_slice_cgroup);
        }
        c->data = s;
        r = sd_bus_set_exit_on_disconnect(s->bus, true);
        if (r >= 0)
                r = sd_bus_attach_event(s->bus, c->host->event, 0);
        /* Before anything is asked of systemd, so its owner is known before
         * the first JobRemoved that matters can come. */
        if (r >= 0)
                r = bus_name_owner_watch(&s->systemd, s->bus, "org.freedesktop.systemd1");
        if (r >= 0)
                r = sd_bus_match_signal_async(s->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                              "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed,
                                              NULL, c);
        /* Until the answer arrives, assume systemd is there: a Launch that
         * races it fails cleanly through on_start_reply anyway. */
        if (r >= 0)
                r = sd_bus_call_method_async(s->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                             "org.freedesktop.systemd1.Manager", "Subscribe", on_subscribed, c, "");
        if (r < 0) {
                bus_name_owner_done(&s->systemd);
                sd_bus_flush_close_unref(s->bus);
                free(s->user_slice_cgroup);
                c->data = NULL;
                return r;
        }
        s->reachable = true;
        TAKE_PTR(s);
        return 0;
}

static void systemd_done(Containment *c) {
        SystemdState *s = state(c);
        if (!s)
                return;
        bus_name_owner_done(&s->systemd);
        sd_bus_flush_close_unref(s->bus);
        free(s->sliced);
        free(s->user_slice_cgroup);
        free(s);
        c->data = NULL;
}

const ContainmentOps containment_systemd_ops = {
        .mechanism = MECHANISM_SYSTEMD,
        .teardown_method = TEARDOWN_CGROUP_KILL,
        .init = systemd_init,
        .done = systemd_done,
        .available = systemd_available,
        .describe = systemd_describe,
        .prepare = systemd_prepare,
        .start = systemd_start,
        .verify = systemd_verify,
        .kill = containment_cgroup_kill,
        .is_empty = containment_cgroup_is_empty,
        .watch = containment_cgroup_watch,
        .list = systemd_list,
        .kill_orphan = containment_cgroup_kill_orphan,
        .identify = systemd_identify,
        .find_supervisor = systemd_find_supervisor,
        .cleanup = systemd_cleanup,
};
