/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bgrun/bus-api.h"
#include "bus-record.h"
#include "bus-job.h"
#include "bus-service.h"
#include "job-id.h"
#include "macro.h"
#include "strv.h"

/* Who may see what, for the message being handled. Object lookups cannot
 * wait for polkit, so here only root sees other users' jobs; polkit admins
 * use the Manager's methods.
 *
 * Only a method call is someone looking. sd-bus also looks objects up to
 * emit bgrund's own signals, and then the current message is whatever bgrund
 * was handling (a JobRemoved from systemd, an admin's Reap): those lookups
 * see every job. For a lookup of one object (path), so does a call made on
 * another path. */
typedef struct Viewer {
        bool everything;
        bool nothing;
        uid_t uid;
} Viewer;

static Viewer current_viewer(BusService *s, sd_bus *bus, const char *path) {
        sd_bus_message *m = sd_bus_get_current_message(bus);
        if (!m || !sd_bus_message_is_method_call(m, NULL, NULL))
                return (Viewer) { .everything = true };
        const char *called = sd_bus_message_get_path(m);
        if (path && (!called || !streq(called, path)))
                return (Viewer) { .everything = true };
        uid_t uid;
        if (bus_caller_uid(s, m, &uid, NULL) < 0)
                return (Viewer) { .nothing = true };
        return (Viewer) { .everything = uid == 0, .uid = uid };
}

static bool viewer_may_see(const Viewer *v, const Job *j) {
        return !v->nothing && (v->everything || j->owner == v->uid);
}

static int job_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                    sd_bus_error *error) {
        BusService *s = userdata;
        const char *prefix = BGRUN_JOB_PATH_PREFIX "/";
        if (!startswith_s(path, prefix))
                return 0;
        const char *id = path + strlen(prefix);
        if (!job_id_is_valid(id))
                return 0;
        Job *j = runtime_find_job(s->runtime, id);
        Viewer v = current_viewer(s, bus, path);
        if (!j || !viewer_may_see(&v, j))
                return 0;
        *found = j;
        return 1;
}

static int job_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *error) {
        BusService *s = userdata;
        Runtime *rt = s->runtime;
        char **list = calloc(job_table_size(&rt->jobs) + 1, sizeof(char *));
        if (!list)
                return -ENOMEM;
        size_t n = 0;
        JobTableIter it;
        Viewer v = current_viewer(s, bus, NULL);
        for (Job *j = job_table_first(&rt->jobs, &it); j; j = job_table_next(&rt->jobs, &it)) {
                if (!viewer_may_see(&v, j))
                        continue;
                char job_path[BUS_JOB_PATH_MAX];
                list[n] = strdup(bus_job_path(j->id, job_path));
                if (!list[n]) {
                        strv_free(list);
                        return -ENOMEM;
                }
                n++;
        }
        *nodes = list;
        return 0;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Job *j = userdata;
        int key = key_lookup(record_keys, _RECORD_KEY_MAX, property);
        if (key < 0)
                return -ENOENT;
        JobView v;
        int r = job_view(j, &v);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot read the record of job %s: %m", j->id);
        return record_appenders[key](reply, &v);
}

/* Built once from the shared record keys, so the properties and Get never
 * drift, from each other or from what bgrun reads. */
static sd_bus_vtable job_vtable[_RECORD_KEY_MAX + 2];

int bus_job_objects_add(BusService *s, sd_bus *bus) {
        job_vtable[0] = (sd_bus_vtable) SD_BUS_VTABLE_START(0);
        for (size_t i = 0; i < _RECORD_KEY_MAX; i++)
                job_vtable[i + 1] = (sd_bus_vtable) SD_BUS_PROPERTY(
                        record_keys[i].name, record_keys[i].signature, property_get, 0,
                        record_key_is_counter(i) ? 0 : SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE);
        job_vtable[_RECORD_KEY_MAX + 1] = (sd_bus_vtable) SD_BUS_VTABLE_END;

        int r = sd_bus_add_fallback_vtable(bus, NULL, BGRUN_JOB_PATH_PREFIX, BGRUN_JOB_INTERFACE, job_vtable,
                                           job_find, s);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(bus, NULL, BGRUN_JOB_PATH_PREFIX, job_enumerate, s);
}
