/* SPDX-License-Identifier: MIT */
#include <json-c/json.h>
#include <stdio.h>

#include "job-record.h"
#include "json-util.h"
#include "launch-options.h"
#include "macro.h"
#include "strv.h"

int record_format_check(json_object *o) {
        if (!json_object_object_get_ex(o, "format", NULL))
                return 0; /* format 0: before records were versioned */
        uint64_t format;
        int r = json_get_u64(o, "format", UINT32_MAX, &format);
        if (r < 0)
                return r;
        return format > RECORD_FORMAT ? -EPROTONOSUPPORT : 0;
}

static const char *const status_table[_JOB_STATUS_MAX] = {
        [JOB_RUNNING] = "running",
        [JOB_EXITED] = "exited",
        [JOB_KILLED] = "killed",
        [JOB_TIMED_OUT] = "timed_out",
        [JOB_FAILED] = "failed",
        [JOB_QUEUED] = "queued",
};

const char *job_status_to_string(JobStatus s) {
        return s >= 0 && s < _JOB_STATUS_MAX ? status_table[s] : NULL;
}

int job_status_from_string(const char *s) {
        for (int i = 0; i < _JOB_STATUS_MAX; i++)
                if (s && streq(s, status_table[i]))
                        return i;
        return -EINVAL;
}

static const char *const teardown_method_table[_TEARDOWN_METHOD_MAX] = {
        [TEARDOWN_NONE] = "",
        [TEARDOWN_CGROUP_KILL] = "cgroup.kill",
        [TEARDOWN_PROCESS_TREE] = "process-tree",
        [TEARDOWN_PROCESS_GROUP] = "process-group",
        [TEARDOWN_CGROUP_GONE] = "cgroup-gone",
        [TEARDOWN_NOT_STARTED] = "not-started",
        [TEARDOWN_SIGNAL] = "signal",
        [TEARDOWN_NEVER_STARTED] = "never-started",
};

const char *teardown_method_to_string(TeardownMethod m) {
        return (unsigned) m < _TEARDOWN_METHOD_MAX ? teardown_method_table[m] : NULL;
}

int teardown_method_from_string(const char *s) {
        for (int i = 0; s && i < _TEARDOWN_METHOD_MAX; i++)
                if (streq(s, teardown_method_table[i]))
                        return i;
        return -EINVAL;
}

static const char *const limit_table[_JOB_LIMIT_MAX] = {
        [JOB_LIMIT_MEMORY_MAX] = "MemoryMax",
        [JOB_LIMIT_TASKS_MAX] = "TasksMax",
        [JOB_LIMIT_CPU_QUOTA] = "CPUQuotaPerSecUSec",
};

static const char *const limit_controller_table[_JOB_LIMIT_MAX] = {
        [JOB_LIMIT_MEMORY_MAX] = "memory",
        [JOB_LIMIT_TASKS_MAX] = "pids",
        [JOB_LIMIT_CPU_QUOTA] = "cpu",
};

const char *job_limit_to_string(JobLimit l) {
        return (unsigned) l < _JOB_LIMIT_MAX ? limit_table[l] : NULL;
}

const char *job_limit_controller(JobLimit l) {
        return (unsigned) l < _JOB_LIMIT_MAX ? limit_controller_table[l] : NULL;
}

bool job_spec_has_limit(const JobSpec *spec, JobLimit l) {
        switch (l) {
        case JOB_LIMIT_MEMORY_MAX: return spec->memory_max > 0;
        case JOB_LIMIT_TASKS_MAX: return spec->tasks_max > 0;
        case JOB_LIMIT_CPU_QUOTA: return spec->cpu_quota_per_sec_usec > 0;
        default: return false;
        }
}

bool job_contained(Mechanism mechanism, bool executed, const JobRun *run) {
        return executed && mechanism_contains(mechanism) && run && run->cgroup && run->cgroup[0];
}

void job_spec_done(JobSpec *s) {
        free(s->session_id);
        free(s->command);
        free(s->cwd);
        free(s->home);
        free(s->shell);
        free(s->unit);
        free(s->caller);
        free(s->groups);
        launch_options_free_fields(s); /* user, environment, … */
        *s = (JobSpec) {};
}

void job_run_done(JobRun *r) {
        free(r->cgroup);
        *r = (JobRun) {};
}

int job_spec_to_json(const JobSpec *s, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        int r = json_add_u64(o, "format", RECORD_FORMAT);
        json_object *groups = json_object_new_array();
        if (r >= 0) r = json_add(o, "groups", groups);
        for (size_t i = 0; r >= 0 && i < s->n_groups; i++)
                r = json_object_array_add(groups, json_object_new_uint64(s->groups[i])) < 0 ? -ENOMEM : 0;

        if (r >= 0) r = json_add_str(o, "id", s->id);
        if (r >= 0) r = json_add_str(o, "session_id", s->session_id);
        if (r >= 0) r = json_add_str(o, "command", s->command);
        if (r >= 0) r = json_add_str(o, "cwd", s->cwd);
        if (r >= 0) r = json_add_u64(o, "owner", s->owner);
        if (r >= 0) r = json_add_u64(o, "uid", s->uid);
        if (r >= 0) r = json_add_u64(o, "gid", s->gid);
        if (r >= 0) r = json_add_str(o, "home", s->home);
        if (r >= 0) r = json_add_str(o, "shell", s->shell);
        if (r >= 0) r = json_add_u64(o, "output_max_bytes", s->output_max_bytes);
        if (r >= 0) r = json_add_u64(o, "keep_free", s->keep_free);
        if (r >= 0) r = json_add_str(o, "mechanism", mechanism_to_string(s->mechanism));
        if (r >= 0) r = json_add_str(o, "unit", s->unit);
        if (r >= 0) r = json_add_u64(o, "created_at", s->created_at);
        if (r >= 0) r = json_add_str(o, "parent", s->parent);
        /* Only when bound, so that an older bgrund reads what it knows. */
        if (r >= 0 && s->caller) r = json_add_str(o, "caller", s->caller);
        /* Launch's options, by their table. */
        if (r >= 0) r = launch_options_to_json(s, o);
        return json_finish(o, r, ret);
}

int job_run_to_json(const JobRun *run, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        int r = json_add_u64(o, "format", RECORD_FORMAT);
        if (r >= 0) r = json_add_u64(o, "pid", (uint64_t) run->pid);
        if (r >= 0) r = json_add_str(o, "start_token", run->start_token);
        if (r >= 0) r = json_add_u64(o, "supervisor_pid", (uint64_t) run->supervisor_pid);
        if (r >= 0) r = json_add_str(o, "supervisor_token", run->supervisor_token);
        if (r >= 0) r = json_add_str(o, "cgroup", run->cgroup);
        if (r >= 0) r = json_add_u64(o, "started_at", run->started_at);
        if (r >= 0 && run->limits_unenforced) {
                json_object *a = json_object_new_array();
                r = json_add(o, "limits_unenforced", a);
                for (int l = 0; r >= 0 && l < _JOB_LIMIT_MAX; l++)
                        if (run->limits_unenforced & (1U << l))
                                r = json_object_array_add(a, json_object_new_string(job_limit_to_string(l))) < 0 ? -ENOMEM : 0;
        }
        return json_finish(o, r, ret);
}

int job_result_to_json(const JobResult *res, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        int r = json_add_u64(o, "format", RECORD_FORMAT);
        if (r >= 0) r = json_add_str(o, "status", job_status_to_string(res->status));
        if (r >= 0) r = json_add_i64(o, "exit_code", res->exit_code);
        if (r >= 0) r = json_add_i64(o, "signal", res->signal);
        if (r >= 0) r = json_add_bool(o, "timed_out", res->timed_out);
        if (r >= 0) r = json_add_bool(o, "executed", res->executed);
        if (r >= 0) r = json_add_bool(o, "contained", res->contained);
        if (r >= 0 && res->started_at) r = json_add_u64(o, "started_at", res->started_at);
        if (r >= 0) r = json_add_u64(o, "finished_at", res->finished_at);
        if (r >= 0) r = json_add_bool(o, "dead", res->dead);
        if (r >= 0) r = json_add_str(o, "method", teardown_method_to_string(res->method));
        if (r >= 0) r = json_add_u64(o, "confirmed_at", res->confirmed_at);
        if (r >= 0) r = json_add_str(o, "reason", res->reason);
        if (r >= 0 && res->failure[0]) r = json_add_str(o, "failure", res->failure);
        if (r >= 0 && res->output_known) {
                r = json_add_u64(o, "output_bytes", res->output_bytes);
                if (r >= 0) r = json_add_bool(o, "output_truncated", res->output_truncated);
                if (r >= 0) r = json_add_u64(o, "output_dropped_bytes", res->output_dropped_bytes);
        }
        if (r >= 0 && res->cpu_usage_known) r = json_add_u64(o, "cpu_usage_usec", res->cpu_usage_usec);
        if (r >= 0 && res->memory_peak_known) r = json_add_u64(o, "memory_peak", res->memory_peak);
        return json_finish(o, r, ret);
}

int job_spec_from_json(const char *json, JobSpec *ret) {
        _cleanup_json_ json_object *o = NULL;
        int r = json_parse_object(json, &o);
        if (r < 0)
                return r;

        _cleanup_(job_spec_done) JobSpec s = {};
        uint64_t u;
        _cleanup_free_ char *mech = NULL;

        r = record_format_check(o);
        if (r >= 0) r = json_get_str_buf(o, "id", s.id, sizeof s.id);
        if (r >= 0 && !job_id_is_valid(s.id)) r = -EBADMSG;
        if (r >= 0) r = json_get_str(o, "session_id", &s.session_id);
        if (r >= 0) r = json_get_str(o, "command", &s.command);
        if (r >= 0) r = json_get_str(o, "cwd", &s.cwd);
        if (r >= 0) r = json_get_u64(o, "owner", UINT32_MAX, &u), s.owner = (uid_t) u;
        if (r >= 0) r = json_get_u64(o, "uid", UINT32_MAX, &u), s.uid = (uid_t) u;
        if (r >= 0) r = json_get_u64(o, "gid", UINT32_MAX, &u), s.gid = (gid_t) u;
        if (r >= 0) r = json_get_str(o, "home", &s.home);
        if (r >= 0) r = json_get_str(o, "shell", &s.shell);
        /* Later additions, with their defaults for a spec written before. */
        s.output_max_bytes = JOB_OUTPUT_MAX_BYTES_DEFAULT;
        s.keep_free = JOB_KEEP_FREE_DEFAULT;
        if (r >= 0 && json_object_object_get_ex(o, "output_max_bytes", NULL))
                r = json_get_u64(o, "output_max_bytes", UINT64_MAX, &s.output_max_bytes);
        if (r >= 0 && json_object_object_get_ex(o, "keep_free", NULL))
                r = json_get_u64(o, "keep_free", UINT64_MAX, &s.keep_free);
        if (r >= 0) r = json_get_str(o, "mechanism", &mech);
        if (r >= 0) {
                int m = mechanism_from_string(mech);
                if (m < 0)
                        r = -EBADMSG;
                else
                        s.mechanism = m;
        }
        if (r >= 0) r = json_get_str(o, "unit", &s.unit);
        if (r >= 0) r = json_get_u64(o, "created_at", UINT64_MAX, &s.created_at);
        /* Specs from before bindings have no caller. */
        if (r >= 0 && json_object_object_get_ex(o, "caller", NULL))
                r = json_get_str(o, "caller", &s.caller);
        /* Launch's options, by their table (defaults for those not there). */
        if (r >= 0) r = launch_options_from_json(o, &s);
        /* Specs from before parents existed have none. */
        if (r >= 0 && json_object_object_get_ex(o, "parent", NULL)) {
                r = json_get_str_buf(o, "parent", s.parent, sizeof s.parent);
                if (r >= 0 && s.parent[0] && !job_id_is_valid(s.parent))
                        r = -EBADMSG;
        }
        if (r < 0)
                return r;

        json_object *groups;
        if (!json_object_object_get_ex(o, "groups", &groups) || !json_object_is_type(groups, json_type_array))
                return -EBADMSG;
        size_t n = json_object_array_length(groups);
        if (n > 65536)
                return -EBADMSG;
        s.groups = calloc(n + 1, sizeof(gid_t));
        if (!s.groups)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *g = json_object_array_get_idx(groups, i);
                if (!json_object_is_type(g, json_type_int) || json_object_get_int64(g) < 0 ||
                    json_object_get_int64(g) > UINT32_MAX)
                        return -EBADMSG;
                s.groups[i] = (gid_t) json_object_get_int64(g);
        }
        s.n_groups = n;

        *ret = s;
        s = (JobSpec) {};
        return 0;
}

int job_run_from_json(const char *json, JobRun *ret) {
        _cleanup_json_ json_object *o = NULL;
        int r = json_parse_object(json, &o);
        if (r < 0)
                return r;

        _cleanup_(job_run_done) JobRun run = {};
        uint64_t u;
        r = record_format_check(o);
        if (r >= 0) r = json_get_u64(o, "pid", INT32_MAX, &u), run.pid = (pid_t) u;
        if (r >= 0) r = json_get_str_buf(o, "start_token", run.start_token, sizeof run.start_token);
        if (r >= 0) r = json_get_u64(o, "supervisor_pid", INT32_MAX, &u), run.supervisor_pid = (pid_t) u;
        if (r >= 0) r = json_get_str_buf(o, "supervisor_token", run.supervisor_token, sizeof run.supervisor_token);
        if (r >= 0) r = json_get_str(o, "cgroup", &run.cgroup);
        if (r >= 0) r = json_get_u64(o, "started_at", UINT64_MAX, &run.started_at);
        json_object *a;
        if (r >= 0 && json_object_object_get_ex(o, "limits_unenforced", &a)) {
                if (!json_object_is_type(a, json_type_array))
                        return -EBADMSG;
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *e = json_object_array_get_idx(a, i);
                        const char *name = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
                        int l;
                        for (l = 0; l < _JOB_LIMIT_MAX; l++)
                                if (name && streq(name, job_limit_to_string(l)))
                                        break;
                        if (l == _JOB_LIMIT_MAX)
                                return -EBADMSG;
                        run.limits_unenforced |= 1U << l;
                }
        }
        if (r < 0)
                return r;
        *ret = run;
        run = (JobRun) {};
        return 0;
}

int job_result_from_json(const char *json, JobResult *ret) {
        _cleanup_json_ json_object *o = NULL;
        int r = json_parse_object(json, &o);
        if (r < 0)
                return r;

        JobResult res = {};
        _cleanup_free_ char *status = NULL, *method = NULL;
        r = record_format_check(o);
        if (r >= 0) r = json_get_str(o, "status", &status);
        if (r >= 0) {
                int s = job_status_from_string(status);
                if (s < 0 || s == JOB_RUNNING || s == JOB_QUEUED)
                        r = -EBADMSG;
                else
                        res.status = s;
        }
        if (r >= 0) r = json_get_i32(o, "exit_code", &res.exit_code);
        if (r >= 0) r = json_get_i32(o, "signal", &res.signal);
        if (r >= 0) r = json_get_bool(o, "timed_out", &res.timed_out);
        if (r >= 0) r = json_get_bool(o, "executed", &res.executed);
        if (r >= 0) r = json_get_bool(o, "contained", &res.contained);
        if (r >= 0 && json_object_object_get_ex(o, "started_at", NULL))
                r = json_get_u64(o, "started_at", UINT64_MAX, &res.started_at);
        if (r >= 0) r = json_get_u64(o, "finished_at", UINT64_MAX, &res.finished_at);
        if (r >= 0) r = json_get_bool(o, "dead", &res.dead);
        if (r >= 0) r = json_get_str(o, "method", &method);
        if (r >= 0) {
                int m = teardown_method_from_string(method);
                if (m < 0)
                        r = -EBADMSG;
                else
                        res.method = m;
        }
        if (r >= 0) r = json_get_u64(o, "confirmed_at", UINT64_MAX, &res.confirmed_at);
        if (r >= 0) r = json_get_str_buf(o, "reason", res.reason, sizeof res.reason);
        if (r >= 0 && json_object_object_get_ex(o, "failure", NULL))
                r = json_get_str_buf(o, "failure", res.failure, sizeof res.failure);
        /* The output's part: all of it or none (a result bgrund wrote for a
         * lost supervisor, or one from before it was recorded). */
        if (r >= 0 && json_object_object_get_ex(o, "output_bytes", NULL)) {
                res.output_known = true;
                r = json_get_u64(o, "output_bytes", UINT64_MAX, &res.output_bytes);
                if (r >= 0) r = json_get_bool(o, "output_truncated", &res.output_truncated);
                if (r >= 0) r = json_get_u64(o, "output_dropped_bytes", UINT64_MAX, &res.output_dropped_bytes);
                if (r >= 0 && res.output_dropped_bytes > res.output_bytes) r = -EBADMSG;
        }
        if (r >= 0 && json_object_object_get_ex(o, "cpu_usage_usec", NULL)) {
                res.cpu_usage_known = true;
                r = json_get_u64(o, "cpu_usage_usec", UINT64_MAX, &res.cpu_usage_usec);
        }
        if (r >= 0 && json_object_object_get_ex(o, "memory_peak", NULL)) {
                res.memory_peak_known = true;
                r = json_get_u64(o, "memory_peak", UINT64_MAX, &res.memory_peak);
        }
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}

void job_result_incomplete(JobResult *ret, uint64_t finished_at, int error) {
        *ret = (JobResult) { .status = JOB_FAILED, .exit_code = -1, .finished_at = finished_at };
        snprintf(ret->reason, sizeof ret->reason,
                 "the job's record is incomplete: its result.json cannot be read (%s); it was not written when the "
                 "job ended (the state directory's file system full?) or was lost since",
                 strerror(-error));
}
