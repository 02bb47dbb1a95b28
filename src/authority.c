/* SPDX-License-Identifier: MIT */
#include "authority.h"
#include "bus-errors.h"
#include "daemon.h"
#include "job-id.h"
#include "macro.h"

int bus_caller_uid(sd_bus_message *m, uid_t *ret, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;

        /* EUID as the bus daemon reports it for the sender's connection: the
         * kernel's SO_PEERCRED, not anything the sender wrote. */
        int r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_setf(error, BGRUN_ERROR_ACCESS_DENIED,
                                         "Request authority denied: the caller's identity cannot be established");
        *ret = uid;
        return 0;
}

bool caller_is_admin(Daemon *d, sd_bus_message *m, uid_t uid) {
        return uid == 0;
}

bool caller_may_see(Daemon *d, sd_bus_message *m, uid_t uid, const Job *j) {
        return j->owner == uid || caller_is_admin(d, m, uid);
}

int bus_find_job(Daemon *d, sd_bus_message *m, const char *id, Job **ret, sd_bus_error *error) {
        uid_t uid;
        int r = bus_caller_uid(m, &uid, error);
        if (r < 0)
                return r;

        /* An invalid id is not echoed: it may be anything the caller sent. */
        if (!job_id_is_valid(id))
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB,
                                         "No such job: a job id is %d characters of [a-z0-9]", JOB_ID_LEN);
        Job *j = job_table_get(&d->jobs, id);
        if (!j || !caller_may_see(d, m, uid, j))
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_SUCH_JOB, "No such job: %s", id);
        *ret = j;
        return 0;
}
