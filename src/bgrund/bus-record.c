/* SPDX-License-Identifier: MIT */
#include "bus-record.h"
#include "containment.h"
#include "macro.h"

static int append_id(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->id);
}
static int append_session(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->session_id);
}
static int append_command(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->command);
}
static int append_cwd(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->cwd);
}
static int append_owner(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "u", (uint32_t) v->spec->owner);
}
static int append_status(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", job_status_to_string(v->status));
}
static int append_exit_code(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "i", (int32_t) (v->result ? v->result->exit_code : -1));
}
static int append_signal(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "i", (int32_t) (v->result ? v->result->signal : 0));
}
static int append_timed_out(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "b", (int) (v->result && v->result->timed_out));
}
static int append_pid(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "u", (uint32_t) (v->run ? v->run->pid : 0));
}
static int append_start_token(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->run ? v->run->start_token : "");
}
static int append_started_at(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", v->run ? v->run->started_at : (uint64_t) 0);
}
static int append_finished_at(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", v->result ? v->result->finished_at : (uint64_t) 0);
}
static int append_output_bytes(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", v->output_bytes);
}

static int append_containment(sd_bus_message *m, const JobView *v) {
        const JobSpec *s = v->spec;
        /* Running means the command was exec'd. */
        bool executed = v->result ? v->result->executed : v->run;
        bool contained = executed && job_contained(s->mechanism, v->run);
        return sd_bus_message_append(m, "a{sv}", 5,
                                     "mechanism", "s", mechanism_to_string(s->mechanism),
                                     "contained", "b", (int) contained,
                                     "executed", "b", (int) executed,
                                     "unit", "s", s->unit ?: "",
                                     "cgroup", "s", v->run && v->run->cgroup ? v->run->cgroup : "");
}

int bus_append_teardown(sd_bus_message *m, const JobView *v) {
        const JobResult *r = v->result;
        return sd_bus_message_append(m, "a{sv}", 3,
                                     "dead", "b", (int) (r && r->dead),
                                     "method", "s", teardown_method_to_string(r ? r->method : TEARDOWN_NONE),
                                     "confirmed_at", "t", r ? r->confirmed_at : (uint64_t) 0);
}

const RecordField record_fields[RECORD_FIELDS_COUNT] = {
        { "id", "s", append_id },
        { "session_id", "s", append_session },
        { "command", "s", append_command },
        { "cwd", "s", append_cwd },
        { "owner", "u", append_owner },
        { "status", "s", append_status },
        { "exit_code", "i", append_exit_code },
        { "signal", "i", append_signal },
        { "timed_out", "b", append_timed_out },
        { "pid", "u", append_pid },
        { "start_token", "s", append_start_token },
        { "started_at", "t", append_started_at },
        { "finished_at", "t", append_finished_at },
        { "output_bytes", "t", append_output_bytes },
        { "containment", "a{sv}", append_containment },
        { "teardown", "a{sv}", bus_append_teardown },
};
_Static_assert(ELEMENTSOF(record_fields) == RECORD_FIELDS_COUNT, "record_fields");

const RecordField *record_field_find(const char *name) {
        for (size_t i = 0; i < RECORD_FIELDS_COUNT; i++)
                if (streq(record_fields[i].name, name))
                        return &record_fields[i];
        return NULL;
}

int bus_append_record(sd_bus_message *m, const JobView *v) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (size_t i = 0; r >= 0 && i < RECORD_FIELDS_COUNT; i++) {
                const RecordField *f = &record_fields[i];
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0) r = sd_bus_message_append(m, "s", f->name);
                if (r >= 0) r = sd_bus_message_open_container(m, 'v', f->signature);
                if (r >= 0) r = f->append(m, v);
                if (r >= 0) r = sd_bus_message_close_container(m);
                if (r >= 0) r = sd_bus_message_close_container(m);
        }
        return r < 0 ? r : sd_bus_message_close_container(m);
}
