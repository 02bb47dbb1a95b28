/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>

#include "job-record.h"
#include "launch-options.h"
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
                .mechanism = MECHANISM_PROCESS_GROUP,
                .unit = (char *) "",
                .created_at = 42,
        };
        launch_options_defaults(&s);
        s.max_runtime_usec = 5000000;
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
                .dead = true, .method = TEARDOWN_CGROUP_KILL, .reason = "", .started_at = 6, .finished_at = 7,
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
        cr_assert_eq(t.started_at, 6);
        cr_assert_eq(t.finished_at, 7);

        /* One of a job that never ran, or from before results said when
         * their run started: none. */
        r.started_at = 0;
        free(json);
        json = NULL;
        cr_assert_eq(job_result_to_json(&r, &json), 0);
        cr_assert_null(strstr(json, "started_at"));
        cr_assert_eq(job_result_from_json(json, &t), 0);
        cr_assert_eq(t.started_at, 0);

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

/* Record formats: every file written says its format; one without it (as
 * bgrun wrote them before formats, and an old supervisor still does after an
 * upgrade) reads as before; a newer one is refused, not guessed at. */
Test(job_record, records_carry_their_format) {
        JobRun run = { .pid = 5, .start_token = "t", .supervisor_pid = 4, .supervisor_token = "s", .cgroup = (char *) "" };
        JobResult res = { .status = JOB_EXITED, .method = TEARDOWN_CGROUP_KILL, .dead = true };
        _cleanup_free_ char *run_json = NULL, *res_json = NULL;
        cr_assert_eq(job_run_to_json(&run, &run_json), 0);
        cr_assert_eq(job_result_to_json(&res, &res_json), 0);
        cr_assert_not_null(strstr(run_json, "\"format\":1"), "%s", run_json);
        cr_assert_not_null(strstr(res_json, "\"format\":1"), "%s", res_json);
}

Test(job_record, unversioned_records_are_read) {
        JobRun run = {};
        cr_assert_eq(job_run_from_json("{\"pid\":7,\"start_token\":\"a\",\"supervisor_pid\":6,"
                                       "\"supervisor_token\":\"b\",\"cgroup\":\"x\",\"started_at\":3}", &run), 0);
        cr_assert_eq(run.pid, 7);
        job_run_done(&run);
        JobResult res = {};
        cr_assert_eq(job_result_from_json("{\"status\":\"exited\",\"exit_code\":3,\"signal\":0,\"timed_out\":false,"
                                          "\"executed\":true,\"contained\":true,\"finished_at\":1,\"dead\":true,"
                                          "\"method\":\"cgroup.kill\",\"confirmed_at\":2,\"reason\":\"\"}", &res), 0);
        cr_assert_eq(res.exit_code, 3);
        JobSpec spec = {};
        cr_assert_eq(job_spec_from_json("{\"id\":\"abc0123456\",\"session_id\":\"\",\"command\":\"true\",\"cwd\":\"/\","
                                        "\"owner\":0,\"uid\":0,\"gid\":0,\"user\":\"root\",\"home\":\"/root\","
                                        "\"shell\":\"/bin/sh\",\"max_runtime_usec\":0,\"mechanism\":\"systemd\","
                                        "\"unit\":\"u\",\"created_at\":1,\"environment\":[],\"groups\":[0]}", &spec), 0);
        cr_assert_str_eq(spec.command, "true");
        job_spec_done(&spec);
}

Test(job_record, newer_format_is_refused) {
        JobResult res = {};
        cr_assert_eq(job_result_from_json("{\"format\":2,\"status\":\"exited\",\"exit_code\":3,\"signal\":0,"
                                          "\"timed_out\":false,\"executed\":true,\"contained\":true,\"finished_at\":1,"
                                          "\"dead\":true,\"method\":\"cgroup.kill\",\"confirmed_at\":2,\"reason\":\"\"}", &res),
                     -EPROTONOSUPPORT);
        JobRun run = {};
        cr_assert_eq(job_run_from_json("{\"format\":99}", &run), -EPROTONOSUPPORT);
        cr_assert_eq(job_run_from_json("{\"format\":\"1\"}", &run), -EBADMSG);
        cr_assert_eq(job_run_from_json("{\"format\":-1}", &run), -EBADMSG);
        JobSpec spec = {};
        cr_assert_eq(job_spec_from_json("{\"format\":2,\"id\":\"abc0123456\"}", &spec), -EPROTONOSUPPORT);
}

#include "grant.h"

Test(job_record, grant_format) {
        Grant g = { .state = GRANT_OPEN, .mechanism = MECHANISM_SYSTEMD, .unit = (char *) "u", .cgroup = (char *) "c" };
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(grant_to_json(&g, &json), 0);
        cr_assert_not_null(strstr(json, "\"format\":1"), "%s", json);
        Grant t = {};
        cr_assert_eq(grant_from_json("{\"state\":\"open\",\"mechanism\":\"systemd\",\"unit\":\"u\",\"cgroup\":\"c\","
                                     "\"opened_at\":1,\"dead\":false,\"method\":\"\",\"released_at\":0}", &t), 0);
        cr_assert_eq(t.state, GRANT_OPEN);
        grant_done(&t);
        cr_assert_eq(grant_from_json("{\"format\":2,\"state\":\"open\",\"mechanism\":\"systemd\",\"unit\":\"u\","
                                     "\"cgroup\":\"c\",\"opened_at\":1,\"dead\":false,\"method\":\"\",\"released_at\":0}", &t),
                     -EPROTONOSUPPORT);
}

Test(job_record, contained_needs_a_containing_mechanism_an_exec_and_a_cgroup) {
        char cgroup[] = "/bgrun.slice/bgrun-job-x.scope/payload", none[] = "";
        JobRun in_cgroup = { .cgroup = cgroup }, no_cgroup = { .cgroup = none }, unknown = {};
        cr_assert(job_contained(MECHANISM_SYSTEMD, true, &in_cgroup));
        cr_assert(job_contained(MECHANISM_CGROUPFS, true, &in_cgroup));
        cr_assert_not(job_contained(MECHANISM_SYSTEMD, false, &in_cgroup), "never exec'd");
        cr_assert_not(job_contained(MECHANISM_PROCESS_GROUP, true, &in_cgroup), "a mechanism that does not contain");
        cr_assert_not(job_contained(MECHANISM_SYSTEMD, true, &no_cgroup));
        cr_assert_not(job_contained(MECHANISM_SYSTEMD, true, &unknown));
        cr_assert_not(job_contained(MECHANISM_SYSTEMD, true, NULL), "no run recorded");
}
