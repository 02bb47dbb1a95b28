/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "job-log.h"
#include "log.h"
#include "mechanism.h"
#include "runtime.h"

/* The fields every entry about a job carries. unit: "" without one. */
typedef struct JobFields {
        char owner[16];
        const char *unit_field; /* OBJECT_SYSTEMD_UNIT or, from a user's instance, OBJECT_SYSTEMD_USER_UNIT */
        const char *unit;       /* NULL: none */
} JobFields;

static void job_fields(const Job *j, JobFields *f) {
        snprintf(f->owner, sizeof f->owner, "%u", (unsigned) j->owner);
        f->unit_field = j->runtime->user_instance ? "OBJECT_SYSTEMD_USER_UNIT" : "OBJECT_SYSTEMD_UNIT";
        f->unit = j->live && j->live->spec.unit && j->live->spec.unit[0] ? j->live->spec.unit : NULL;
}

void job_log_started(const Job *j) {
        JobFields f;
        job_fields(j, &f);
        const char *mechanism = j->live ? mechanism_to_string(j->live->spec.mechanism) : NULL;
        const LogField fields[] = {
                { "MESSAGE_ID", BGRUN_MESSAGE_JOB_STARTED },
                { "BGRUN_JOB_ID", j->id },
                { "BGRUN_OWNER_UID", f.owner },
                { "BGRUN_MECHANISM", mechanism },
                { f.unit_field, f.unit },
        };
        log_struct(LOG_LEVEL_INFO, fields, "Job %s of uid %s started (%s%s%s).", j->id, f.owner,
                   mechanism ?: "?", f.unit ? ", " : "", f.unit ?: "");
}

void job_log_ended(const Job *j, JobStatus status, const JobResult *res) {
        JobFields f;
        job_fields(j, &f);
        bool stopped = status == JOB_KILLED && j->live && j->live->request == JOB_REQUEST_STOP;
        const char *id = status != JOB_KILLED ? BGRUN_MESSAGE_JOB_ENDED :
                         stopped              ? BGRUN_MESSAGE_JOB_STOPPED :
                                                BGRUN_MESSAGE_JOB_KILLED;
        char exit_code[16] = "", signal[16] = "";
        const char *method = NULL, *dead = NULL;
        if (res) {
                snprintf(exit_code, sizeof exit_code, "%d", res->exit_code);
                snprintf(signal, sizeof signal, "%d", res->signal);
                method = teardown_method_to_string(res->method);
                dead = res->dead ? "1" : "0";
        }
        const LogField fields[] = {
                { "MESSAGE_ID", id },
                { "BGRUN_JOB_ID", j->id },
                { "BGRUN_OWNER_UID", f.owner },
                { "BGRUN_STATUS", job_status_to_string(status) },
                { "BGRUN_EXIT_CODE", res ? exit_code : NULL },
                { "BGRUN_SIGNAL", res ? signal : NULL },
                { "BGRUN_TEARDOWN", method },
                { "BGRUN_DEAD", dead },
                { f.unit_field, f.unit },
        };
        if (!res)
                log_struct(LOG_LEVEL_INFO, fields, "Job %s of uid %s ended: %s.", j->id, f.owner,
                           job_status_to_string(status));
        else if (res->signal > 0)
                log_struct(LOG_LEVEL_INFO, fields, "Job %s of uid %s %s: signal %d; teardown %s, %s.", j->id, f.owner,
                           stopped ? "stopped" : job_status_to_string(status), res->signal, method,
                           res->dead ? "dead" : "not confirmed dead");
        else
                log_struct(LOG_LEVEL_INFO, fields, "Job %s of uid %s %s: exit code %d; teardown %s, %s.", j->id,
                           f.owner, stopped ? "stopped" : job_status_to_string(status), res->exit_code, method,
                           res->dead ? "dead" : "not confirmed dead");
}

void job_log_refused(const Job *j, int error, const char *message) {
        JobFields f;
        job_fields(j, &f);
        const LogField fields[] = {
                { "MESSAGE_ID", BGRUN_MESSAGE_JOB_REFUSED },
                { "BGRUN_JOB_ID", j->id },
                { "BGRUN_OWNER_UID", f.owner },
        };
        log_struct(LOG_LEVEL_WARNING, fields, "Job %s of uid %s not started, nothing ran: %s", j->id, f.owner,
                   message ?: "no mechanism could contain it");
}

void job_log_launch_refused(uid_t owner) {
        char o[16];
        snprintf(o, sizeof o, "%u", (unsigned) owner);
        const LogField fields[] = {
                { "MESSAGE_ID", BGRUN_MESSAGE_JOB_REFUSED },
                { "BGRUN_OWNER_UID", o },
        };
        log_struct(LOG_LEVEL_WARNING, fields,
                   "Launch by uid %s refused: enforcing mode and no containing mechanism is available.", o);
}

void job_log_limit(uid_t owner, const Job *j, const char *limit, unsigned long long value) {
        char o[16], v[24];
        snprintf(o, sizeof o, "%u", (unsigned) owner);
        snprintf(v, sizeof v, "%llu", value);
        const LogField fields[] = {
                { "MESSAGE_ID", BGRUN_MESSAGE_LIMIT_HIT },
                { "BGRUN_OWNER_UID", o },
                { "BGRUN_JOB_ID", j ? j->id : NULL },
                { "BGRUN_LIMIT", limit },
                { "BGRUN_LIMIT_VALUE", v },
        };
        if (j)
                log_struct(LOG_LEVEL_INFO, fields, "Job %s of uid %s forgotten: %s=%s reached.", j->id, o, limit, v);
        else
                log_struct(LOG_LEVEL_WARNING, fields, "Launch by uid %s refused: %s=%s reached.", o, limit, v);
}
