/* SPDX-License-Identifier: MIT */
#include "launch-builder.h"
#include "session-network.h"
#include "bus-record.h"
#include "launch-options.h"
#include "macro.h"
#include "network-denied.h"
#include "sandbox-plan.h"

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
        return sd_bus_message_append(m, "b", (int) (v->result ? v->result->timed_out : v->status == JOB_TIMED_OUT));
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
static int append_parent(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->parent);
}
static int append_bind_to_caller(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "b", v->spec->bind_to_caller);
}

static int append_request_id(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->request_id ?: "");
}
static int append_queue_position(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "u", (uint32_t) v->queue_position);
}
static int append_failure(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->result ? v->result->failure : "");
}
static int append_argv(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append_strv(m, v->spec->argv);
}

static int append_stdin(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", job_stdin_to_string(v->spec->stdin_mode));
}
static int append_user(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "s", v->spec->user ?: "");
}
static int append_cpu_usage(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", v->usage.cpu_known ? v->usage.cpu_usage_usec : UINT64_MAX);
}
static int append_memory_peak(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", v->usage.memory_peak_known ? v->usage.memory_peak : UINT64_MAX);
}
static int append_limits_unenforced(sd_bus_message *m, const JobView *v) {
        unsigned bits = v->run ? v->run->limits_unenforced : 0;
        int r = sd_bus_message_open_container(m, 'a', "s");
        for (int l = 0; r >= 0 && l < _JOB_LIMIT_MAX; l++)
                if (bits & (1U << l))
                        r = sd_bus_message_append(m, "s", job_limit_to_string(l));
        return r < 0 ? r : sd_bus_message_close_container(m);
}
static int append_output_bytes(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", v->output_bytes);
}
/* What the supervisor recorded at the end; before that (and for a result
 * bgrund wrote for a lost supervisor, or a record from before there were
 * caps) what the output's layout says was dropped, by the cap or by
 * KeepFree=. */
static uint64_t output_dropped_bytes(const JobView *v) {
        if (v->result && v->result->output_known)
                return v->result->output_dropped_bytes;
        return v->output_dropped_bytes;
}
static int append_output_truncated(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "b", (int) (output_dropped_bytes(v) > 0));
}
static int append_output_dropped_bytes(sd_bus_message *m, const JobView *v) {
        return sd_bus_message_append(m, "t", output_dropped_bytes(v));
}

/* One entry {sv} of a dictionary being built, with key and type from a
 * shared key table. */
static int open_entry(sd_bus_message *m, const KeyInfo *k) {
        int r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0) r = sd_bus_message_append_basic(m, 's', k->name);
        if (r >= 0) r = sd_bus_message_open_container(m, 'v', k->signature);
        return r;
}

static int close_entry(sd_bus_message *m) {
        int r = sd_bus_message_close_container(m);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

#define APPEND_ENTRY(m, keys, key, ...)                                          \
        ({                                                                       \
                int _r = open_entry((m), &(keys)[key]);                          \
                if (_r >= 0) _r = sd_bus_message_append((m), (keys)[key].signature, __VA_ARGS__); \
                if (_r >= 0) _r = close_entry(m);                                \
                _r;                                                              \
        })

static int append_containment(sd_bus_message *m, const JobView *v) {
        const JobSpec *s = v->spec;
        /* Running means the command was exec'd; an ended job's result says
         * what its writer found, contained included. */
        bool executed = v->result ? v->result->executed : v->run != NULL;
        bool contained = v->result ? v->result->contained : job_contained(s->mechanism, executed, v->run);
        const char *cgroup = v->run && v->run->cgroup ? v->run->cgroup : "";

        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0) r = APPEND_ENTRY(m, containment_keys, CONTAINMENT_KEY_MECHANISM, mechanism_to_string(s->mechanism));
        if (r >= 0) r = APPEND_ENTRY(m, containment_keys, CONTAINMENT_KEY_CONTAINED, (int) contained);
        if (r >= 0) r = APPEND_ENTRY(m, containment_keys, CONTAINMENT_KEY_EXECUTED, (int) executed);
        if (r >= 0) r = APPEND_ENTRY(m, containment_keys, CONTAINMENT_KEY_UNIT, s->unit ?: "");
        if (r >= 0) r = APPEND_ENTRY(m, containment_keys, CONTAINMENT_KEY_CGROUP, cgroup);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* The limits as launched, by the option table's rows that are limits:
 * named and typed as Launch's options. One whose default is 0 and that was
 * not set is absent; the stop's two always apply (their defaults when not
 * given). */
static int append_limits(sd_bus_message *m, const JobView *v) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (LaunchOption i = 0; r >= 0 && i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                if (!(o->flags & LAUNCH_LIMIT))
                        continue;
                LaunchValue value = launch_option_get(i, v->spec);
                if (value.u64 == 0 && o->default_value == 0)
                        continue;
                r = bus_append_launch_entry(m, o->name, &value);
        }
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* mech into mechanisms (n of them), once. */
static void name_mechanism(const char **mechanisms, size_t *n, const char *mech) {
        for (size_t k = 0; k < *n; k++)
                if (streq(mechanisms[k], mech))
                        return;
        mechanisms[(*n)++] = mech;
}

/* The sandbox as applied: the options not at their default (and those
 * that qualify every sandbox, whatever their value), by the table's sandbox
 * rows, and the mechanisms that enforce them, each named once: the
 * options' own, then what every sandbox has. */
static int append_sandbox(sd_bus_message *m, const JobView *v) {
        const char *mechanisms[_LAUNCH_OPTION_MAX + 8] = {};
        size_t n = 0;
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (LaunchOption i = 0; r >= 0 && i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                bool shown = o->flags & LAUNCH_SANDBOX_MODIFIER ? sandbox_requested(v->spec) : launch_option_is_set(i, v->spec);
                if (!(o->flags & LAUNCH_SANDBOX) || !shown)
                        continue;
                LaunchValue value = launch_option_get(i, v->spec);
                r = bus_append_launch_entry(m, o->name, &value);
                const char *mech = launch_sandbox_mechanism(i);
                if (mech)
                        name_mechanism(mechanisms, &n, mech);
        }
        /* Whose network: its own, or its session's (shared with the jobs of
         * its owner's session that have the same network options). */
        if (r >= 0 && v->spec->private_network)
                r = bus_append_launch_entry(m, "network", &(LaunchValue) {
                        .signature = "s", .str = session_network_shared(v->spec) ? "session" : "own" });
        for (size_t k = 0; n > 0 && sandbox_common_mechanisms[k]; k++)
                name_mechanism(mechanisms, &n, sandbox_common_mechanisms[k]);
        if (r >= 0 && n > 0)
                r = bus_append_launch_entry(m, "mechanisms", &(LaunchValue) { .signature = "as", .strv = (char **) mechanisms });
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* With AllowedDomains, the hosts its proxy refused, as its supervisor
 * keeps them; a line that is not one it writes ends what is shown. */
static int append_denied_host(const char *host, uint64_t count, void *userdata) {
        return sd_bus_message_append(userdata, "{st}", host, count);
}
static int append_network_denied(sd_bus_message *m, const JobView *v) {
        int r = sd_bus_message_open_container(m, 'a', "{st}");
        if (r >= 0 && v->network_denied) {
                int k = network_denied_parse(v->network_denied, append_denied_host, m);
                if (k < 0 && k != -EBADMSG)
                        r = k;
        }
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* The result's, or, from an end from outside's confirmation on, the same
 * teardown from its slot. */
static int append_teardown(sd_bus_message *m, const JobView *v) {
        const JobTeardown *t = &v->teardown;
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0) r = APPEND_ENTRY(m, teardown_keys, TEARDOWN_KEY_DEAD, (int) t->dead);
        if (r >= 0) r = APPEND_ENTRY(m, teardown_keys, TEARDOWN_KEY_METHOD, teardown_method_to_string(t->method));
        if (r >= 0) r = APPEND_ENTRY(m, teardown_keys, TEARDOWN_KEY_CONFIRMED_AT, t->confirmed_at);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

const RecordAppend record_appenders[_RECORD_KEY_MAX] = {
        [RECORD_KEY_ID] = append_id,
        [RECORD_KEY_SESSION_ID] = append_session,
        [RECORD_KEY_COMMAND] = append_command,
        [RECORD_KEY_CWD] = append_cwd,
        [RECORD_KEY_OWNER] = append_owner,
        [RECORD_KEY_STATUS] = append_status,
        [RECORD_KEY_EXIT_CODE] = append_exit_code,
        [RECORD_KEY_SIGNAL] = append_signal,
        [RECORD_KEY_TIMED_OUT] = append_timed_out,
        [RECORD_KEY_PID] = append_pid,
        [RECORD_KEY_START_TOKEN] = append_start_token,
        [RECORD_KEY_STARTED_AT] = append_started_at,
        [RECORD_KEY_FINISHED_AT] = append_finished_at,
        [RECORD_KEY_OUTPUT_BYTES] = append_output_bytes,
        [RECORD_KEY_OUTPUT_TRUNCATED] = append_output_truncated,
        [RECORD_KEY_OUTPUT_DROPPED_BYTES] = append_output_dropped_bytes,
        [RECORD_KEY_CONTAINMENT] = append_containment,
        [RECORD_KEY_TEARDOWN] = append_teardown,
        [RECORD_KEY_PARENT] = append_parent,
        [RECORD_KEY_STDIN] = append_stdin,
        [RECORD_KEY_BIND_TO_CALLER] = append_bind_to_caller,
        [RECORD_KEY_REQUEST_ID] = append_request_id,
        [RECORD_KEY_QUEUE_POSITION] = append_queue_position,
        [RECORD_KEY_FAILURE] = append_failure,
        [RECORD_KEY_ARGV] = append_argv,
        [RECORD_KEY_SANDBOX] = append_sandbox,
        [RECORD_KEY_NETWORK_DENIED] = append_network_denied,
        [RECORD_KEY_USER] = append_user,
        [RECORD_KEY_LIMITS] = append_limits,
        [RECORD_KEY_LIMITS_UNENFORCED] = append_limits_unenforced,
        [RECORD_KEY_CPU_USAGE_USEC] = append_cpu_usage,
        [RECORD_KEY_MEMORY_PEAK] = append_memory_peak,
};

bool bus_record_key_absent(RecordKey k, const JobView *v) {
        switch (k) {
        case RECORD_KEY_CPU_USAGE_USEC: return !v->usage.cpu_known;
        case RECORD_KEY_MEMORY_PEAK: return !v->usage.memory_peak_known;
        case RECORD_KEY_ARGV: return !v->spec->argv; /* a job of a shell command line */
        default: return false;
        }
}

int bus_append_record(sd_bus_message *m, const JobView *v) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (size_t i = 0; r >= 0 && i < _RECORD_KEY_MAX; i++) {
                if (bus_record_key_absent(i, v))
                        continue;
                r = open_entry(m, &record_keys[i]);
                if (r >= 0) r = record_appenders[i](m, v);
                if (r >= 0) r = close_entry(m);
        }
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* Start the answer to call with the job's record at hand. When the record
 * cannot be read, call is answered with that error and *ret stays NULL. */
static int begin_record_reply(Job *j, sd_bus_message *call, JobView *v, sd_bus_message **ret) {
        *ret = NULL;
        int r = job_view(j, v);
        if (r < 0)
                return sd_bus_reply_method_errnof(call, r, "Cannot read the record of job %s: %m", j->id);
        return sd_bus_message_new_method_return(call, ret);
}

int bus_reply_record(Job *j, sd_bus_message *call) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        JobView v;
        int r = begin_record_reply(j, call, &v, &reply);
        if (r < 0 || !reply)
                return r;
        r = bus_append_record(reply, &v);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

int bus_reply_kill(Job *j, sd_bus_message *call, bool killed) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        /* The teardown alone: nothing else of the record is in the answer. */
        JobView v = {};
        int r = job_view_teardown(j, &v.teardown);
        if (r < 0)
                return sd_bus_reply_method_errnof(call, r, "Cannot read the record of job %s: %m", j->id);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0) r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0) r = APPEND_ENTRY(reply, kill_keys, KILL_KEY_KILLED, (int) killed);
        if (r >= 0) r = open_entry(reply, &kill_keys[KILL_KEY_TEARDOWN]);
        if (r >= 0) r = append_teardown(reply, &v);
        if (r >= 0) r = close_entry(reply);
        if (r >= 0) r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}
