/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bgrun/bus-api.h"
#include "bus-listen.h"
#include "bus-service.h"
#include "job-id.h"
#include "log.h"
#include "macro.h"
#include "bus-polkit.h"

/* Asking the bus daemon for a sender's credentials is a round trip. A unique
 * connection name is never reused on a bus and its credentials are fixed when
 * it connects, so a small cache of name → (uid, pid) is always right. */
#define CREDS_CACHE_SIZE 64
static struct {
        char sender[64];
        uid_t uid;
        pid_t pid;
} creds_cache[CREDS_CACHE_SIZE];
static unsigned creds_cache_next;

static bool creds_cache_get(const char *sender, uid_t *ret_uid, pid_t *ret_pid) {
        for (unsigned i = 0; i < CREDS_CACHE_SIZE; i++)
                if (creds_cache[i].sender[0] && streq(creds_cache[i].sender, sender)) {
                        *ret_uid = creds_cache[i].uid;
                        *ret_pid = creds_cache[i].pid;
                        return true;
                }
        return false;
}

static void creds_cache_put(const char *sender, uid_t uid, pid_t pid) {
        if (strlen(sender) >= sizeof creds_cache[0].sender)
                return;
        unsigned i = creds_cache_next++ % CREDS_CACHE_SIZE;
        strcpy(creds_cache[i].sender, sender);
        creds_cache[i].uid = uid;
        creds_cache[i].pid = pid;
}

/* Asked for in a method handler, a new sender's credentials would hold up
 * every other caller for that round trip. So a filter sees each method call
 * first: one from a sender not in the cache is held while its credentials
 * are asked for asynchronously, and dispatched again once they are in (or
 * the daemon failed to say: its handler then asks itself, and reports). The
 * daemon answers in order, so one sender's calls keep their order. Past
 * CREDS_QUERIES_MAX held calls, handlers ask for themselves. */
#define CREDS_QUERIES_MAX 256

typedef struct CredsQuery {
        struct CredsQuery *next;
        sd_bus_message *request;
        sd_bus_slot *slot; /* GetConnectionCredentials in flight; NULL once answered */
} CredsQuery;

static CredsQuery *creds_queries;
static unsigned n_creds_queries;

static void creds_query_free(CredsQuery *q) {
        for (CredsQuery **p = &creds_queries; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        break;
                }
        n_creds_queries--;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->request);
        free(q);
}

static int on_creds(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        CredsQuery *q = userdata;
        q->slot = sd_bus_slot_unref(q->slot);
        const char *sender = sd_bus_message_get_sender(q->request);
        uint32_t uid = UID_INVALID, pid = 0;
        const char *key;
        int r = sd_bus_message_is_method_error(reply, NULL) ? -EIO : sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0 && streq(key, "UnixUserID"))
                        r = sd_bus_message_read(reply, "v", "u", &uid);
                else if (r >= 0 && streq(key, "ProcessID"))
                        r = sd_bus_message_read(reply, "v", "u", &pid);
                else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r >= 0 && uid != UID_INVALID)
                creds_cache_put(sender, (uid_t) uid, (pid_t) pid);

        r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(q->request), q->request);
        if (r < 0) {
                log_warning_errno(r, "Cannot dispatch a call again after its caller's credentials: %m");
                (void) sd_bus_reply_method_errnof(q->request, r, "Cannot establish the caller's identity: %m");
                creds_query_free(q);
        }
        return 0;
}

static int creds_prefetch(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        uid_t uid;
        pid_t pid;
        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        /* Back from its query: dispatched now, whatever came of it. First,
         * as its sender is usually in the cache by now. */
        for (CredsQuery *q = creds_queries; q; q = q->next)
                if (q->request == m) {
                        creds_query_free(q);
                        return 0;
                }
        const char *sender = sd_bus_message_get_sender(m), *iface = sd_bus_message_get_interface(m);
        if (!sender || sender[0] != ':' || creds_cache_get(sender, &uid, &pid))
                return 0;
        if (iface && (streq(iface, "org.freedesktop.DBus.Peer") || streq(iface, "org.freedesktop.DBus.Introspectable")))
                return 0; /* answered without an identity */
        if (n_creds_queries >= CREDS_QUERIES_MAX)
                return 0;

        CredsQuery *q = calloc(1, sizeof(CredsQuery));
        if (!q)
                return 0;
        int r = sd_bus_call_method_async(sd_bus_message_get_bus(m), &q->slot, "org.freedesktop.DBus",
                                         "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials",
                                         on_creds, q, "s", sender);
        if (r < 0) {
                free(q);
                return 0;
        }
        q->request = sd_bus_message_ref(m);
        q->next = creds_queries;
        creds_queries = q;
        n_creds_queries++;
        return 1; /* held */
}

int bus_authority_prefetch_creds(sd_bus *bus) {
        return sd_bus_add_filter(bus, NULL, creds_prefetch, NULL);
}

void bus_authority_prefetch_done(void) {
        while (creds_queries)
                creds_query_free(creds_queries);
}

static int caller_creds(sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;
        pid_t pid = 0;

        const char *sender = sd_bus_message_get_sender(m);
        /* A --listen connection: its socket's peer, read at accept. */
        if (!sender && bus_listen_peer(sd_bus_message_get_bus(m), ret_uid, &pid, NULL) >= 0) {
                if (ret_pid)
                        *ret_pid = pid;
                return 0;
        }
        if (sender && sender[0] == ':' && creds_cache_get(sender, ret_uid, &pid)) {
                if (ret_pid)
                        *ret_pid = pid;
                return 0;
        }

        /* EUID and PID as the bus daemon reports them for the sender's
         * connection: the kernel's SO_PEERCRED, not anything the sender
         * wrote. Only the uid is authority; the pid is a hint (parents). */
        int r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: the caller's identity cannot be established");
        (void) sd_bus_creds_get_pid(creds, &pid);
        if (sender && sender[0] == ':')
                creds_cache_put(sender, uid, pid);
        *ret_uid = uid;
        if (ret_pid)
                *ret_pid = pid;
        return 0;
}

static uid_t served_only = UID_INVALID;

void bus_authority_serve_only(uid_t uid) {
        served_only = uid;
}

int bus_caller_creds(sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid, sd_bus_error *error) {
        uid_t uid = UID_INVALID;
        pid_t pid = 0;
        int r = caller_creds(m, &uid, &pid, error);
        if (r < 0)
                return r;
        /* A session bus admits only its user's connections (and root's, with
         * some configurations): whoever else comes through is refused. */
        if (served_only != UID_INVALID && uid != served_only)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: this bgrund --user serves uid %u only",
                                         (unsigned) served_only);
        *ret_uid = uid;
        if (ret_pid)
                *ret_pid = pid;
        return 0;
}

int bus_caller_uid(sd_bus_message *m, uid_t *ret, sd_bus_error *error) {
        return bus_caller_creds(m, ret, NULL, error);
}

int caller_is_admin(BusService *s, sd_bus_message *m, uid_t uid) {
        if (served_only != UID_INVALID) /* bgrund --user: its user, no one else */
                return uid == served_only;
        if (uid == 0)
                return 1;
        int r = bus_polkit_check(s, m, uid, BGRUN_POLKIT_MANAGE_ANY);
        if (r == -EINPROGRESS)
                return r;
        return r > 0; /* a failed query grants nothing */
}

int bus_find_job(BusService *s, sd_bus_message *m, const char *id, Job **ret, sd_bus_error *error) {
        uid_t uid;
        int r = bus_caller_uid(m, &uid, error);
        if (r < 0)
                return r;

        /* An invalid id is not echoed: it may be anything the caller sent. */
        if (!job_id_is_valid(id))
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB,
                                         "No such job: a job id is %d characters of [a-z0-9]", JOB_ID_LEN);
        /* Asked for whatever id is not the caller's own, there or not: when
         * only another owner's job made bgrund ask, the answer's delay would
         * tell that it exists. */
        Job *j = runtime_find_job(s->runtime, id);
        if (!j || j->owner != uid) {
                r = caller_is_admin(s, m, uid);
                if (r == -EINPROGRESS)
                        return r;
                if (r <= 0)
                        j = NULL;
        }
        if (!j)
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB, "No such job: %s", id);
        *ret = j;
        return 0;
}

/* Read a method's leading job id argument and resolve it for the caller. */
int bus_read_job(BusService *s, sd_bus_message *m, Job **ret, sd_bus_error *error) {
        const char *id;
        int r = sd_bus_message_read(m, "s", &id);
        return r < 0 ? r : bus_find_job(s, m, id, ret, error);
}
