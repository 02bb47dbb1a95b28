/* SPDX-License-Identifier: MIT */
#include "bus-authority.h"
#include "bgrun/bus-api.h"
#include "bus-listen.h"
#include "bus-service.h"
#include "job-id.h"
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
        Job *j = runtime_find_job(s->runtime, id);
        if (j && j->owner != uid) {
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
