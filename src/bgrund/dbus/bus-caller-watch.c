/* SPDX-License-Identifier: MIT */
#include "bgrun/bus-api.h"
#include "bus-caller-watch.h"
#include "bus-callers.h"
#include "bus-client.h"
#include "bus-peer.h"
#include "bus-sender.h"
#include "bus-service.h"
#include "log.h"
#include "macro.h"

/* A name's check after a restart, in flight. */
typedef struct OwnerCheck {
        BusService *service;
        char name[];
} OwnerCheck;

static int on_owner_checked(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        OwnerCheck *c = userdata;
        int has = 1;
        /* A reply to bgrund's own call: the bus daemon lets only the
         * connection that was called answer it. */
        if (!sd_bus_message_is_method_error(m, NULL))
                (void) sd_bus_message_read(m, "b", &has);
        if (!has) {
                log_info("Connection %s that launched bound jobs closed while bgrund was away", c->name);
                bus_caller_gone(c->service, c->name);
        }
        return 0;
}

/* The binding of a job whose caller was on a --listen socket ends with
 * bgrund: the job runs on, unbound (its record says so). */
static void unbind(Job *j) {
        job_unbind(j);
        log_info("Job %s: its caller's connection ended with bgrund's restart; it runs on, unbound", j->id);
}

static int rebind(BusService *s, Job *j) {
        const char *name = j->live->spec.caller;
        if (!s->bus || !bus_callers_watched(s) || startswith_s(name, BUS_PEER_NAME_PREFIX)) {
                unbind(j);
                return 0;
        }
        BusClient *client;
        int r = bus_client_get_name(s, name, j->owner, &client);
        if (r < 0)
                return r;
        bool new = !client->bound.head;
        r = caller_jobs_add(&client->bound, j);
        if (r < 0) {
                bus_client_release(client);
                return r;
        }
        if (!new)
                return 0;
        OwnerCheck *c = malloc(sizeof(OwnerCheck) + strlen(name) + 1);
        if (!c)
                return -ENOMEM;
        c->service = s;
        strcpy(c->name, name);
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        r = sd_bus_call_method_async(s->bus, &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "NameHasOwner", on_owner_checked, c, "s", name);
        if (r < 0) {
                free(c);
                return r;
        }
        /* The bus owns the call; its answer frees what it carries. */
        (void) sd_bus_slot_set_destroy_callback(slot, free);
        return sd_bus_slot_set_floating(slot, true);
}

int bus_caller_watch_start(BusService *s) {
        /* Once, at start: the stored bindings. */
        for (Job *j = s->runtime->all.head; j; j = j->all_next) {
                if (!j->live || job_is_ended(j) || !j->live->spec.bind_to_caller || !j->live->spec.caller)
                        continue;
                int r = rebind(s, j);
                if (r < 0)
                        log_warning_errno(r, "Job %s: cannot watch its caller again: %m", j->id);
        }
        return 0;
}

int bus_caller_watch_prepare(BusService *s, sd_bus_message *m, JobSpec *spec, sd_bus_error *error) {
        if (!spec->bind_to_caller)
                return 0;
        const char *name = bus_caller_name(s, m);
        if (!name)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "BindToCaller needs a caller with a connection name; this one has none");
        /* A direct connection's close is seen directly; the bus's through the match. */
        if (!startswith_s(name, BUS_PEER_NAME_PREFIX) && !bus_callers_watched(s))
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "BindToCaller cannot be honoured: bgrund cannot watch its callers' connections; nothing was started");
        spec->caller = strdup(name);
        return spec->caller ? 0 : -ENOMEM;
}

int bus_caller_watch_bind(BusService *s, sd_bus_message *m, Job *j) {
        if (!j->live || !j->live->spec.bind_to_caller)
                return 0;
        BusClient *c;
        int r = bus_client_get(s, m, j->owner, &c);
        if (r < 0)
                return r;
        r = caller_jobs_add(&c->bound, j);
        if (r < 0)
                bus_client_release(c);
        return r;
}

void bus_caller_watch_job_done(BusService *s, Job *j) {
        CallerJobs *l = caller_jobs_remove(j);
        if (l)
                bus_client_release(MAP_ITEM(l, BusClient, bound));
}
