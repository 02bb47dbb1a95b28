/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>

#include "job-record.h"
#include "macro.h"

Test(job_record, spec_roundtrip) {
        char *env[] = { (char *) "A=1", (char *) "B=two words", NULL };
        gid_t groups[] = { 100, 27, 4294967294U };
        JobSpec s = {
                .id = "abc0123456",
                .session_id = (char *) "sess",
                .command = (char *) "printf 'x\"y'\n",
                .cwd = (char *) "/tmp",
                .owner = 1000, .uid = 1000, .gid = 100,
                .groups = groups, .n_groups = 3,
                .user = (char *) "alice", .home = (char *) "/home/alice", .shell = (char *) "/bin/sh",
                .environment = env,
                .max_runtime_usec = 5000000,
                .mechanism = MECHANISM_PROCESS_GROUP,
                .unit = (char *) "",
                .created_at = 42,
        };
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        JobSpec t = {};
        cr_assert_eq(job_spec_from_json(json, &t), 0);
        cr_assert_str_eq(t.id, s.id);
        cr_assert_str_eq(t.command, s.command);
        cr_assert_str_eq(t.environment[1], "B=two words");
        cr_assert_null(t.environment[2]);
        cr_assert_eq(t.owner, 1000);
        cr_assert_eq(t.n_groups, 3);
        cr_assert_eq(t.groups[1], 27);
        cr_assert_eq(t.groups[2], 4294967294U);
        cr_assert_eq(t.mechanism, MECHANISM_PROCESS_GROUP);
        cr_assert_eq(t.max_runtime_usec, 5000000);
        job_spec_done(&t);
}

Test(job_record, result_roundtrip_and_running_rejected) {
        JobResult r = {
                .status = JOB_KILLED, .exit_code = -1, .signal = 9, .executed = true, .contained = true,
                .dead = true, .method = TEARDOWN_CGROUP_KILL, .reason = "", .finished_at = 7,
                .confirmed_at = 8,
        };
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_result_to_json(&r, &json), 0);
        JobResult t = {};
        cr_assert_eq(job_result_from_json(json, &t), 0);
        cr_assert_eq(t.status, JOB_KILLED);
        cr_assert_eq(t.signal, 9);
        cr_assert_eq(t.exit_code, -1);
        cr_assert(t.dead);
        cr_assert_eq(t.method, TEARDOWN_CGROUP_KILL);

        /* A result never says "running". */
        r.status = JOB_RUNNING;
        free(json);
        json = NULL;
        cr_assert_eq(job_result_to_json(&r, &json), 0);
        cr_assert_eq(job_result_from_json(json, &t), -EBADMSG);
}

Test(job_record, spec_rejects_invalid_id_and_types) {
        JobSpec t = {};
        cr_assert_eq(job_spec_from_json("{\"id\":\"../../etc\"}", &t), -EBADMSG);
        cr_assert_eq(job_spec_from_json("not json", &t), -EBADMSG);
        cr_assert_eq(job_spec_from_json("{\"id\":5}", &t), -EBADMSG);
}

Test(job_record, status_names) {
        for (int i = 0; i < _JOB_STATUS_MAX; i++)
                cr_assert_eq(job_status_from_string(job_status_to_string(i)), i);
        cr_assert_eq(job_status_from_string("paused"), -EINVAL);
}
