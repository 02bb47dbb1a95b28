/* SPDX-License-Identifier: MIT */
/* The record's output parts: the spec's cap and KeepFree= (with defaults
 * for a spec written before them), the result's output summary. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-record.h"
#include "macro.h"

static const char old_spec[] =
        "{\"environment\":[],\"groups\":[0],\"id\":\"abc0123456\",\"session_id\":\"\",\"command\":\"true\","
        "\"cwd\":\"/\",\"owner\":0,\"uid\":0,\"gid\":0,\"user\":\"root\",\"home\":\"/root\",\"shell\":\"/bin/sh\","
        "\"max_runtime_usec\":0,\"mechanism\":\"systemd\",\"unit\":\"u.scope\",\"created_at\":1}";

Test(output_record, a_spec_from_before_gets_the_defaults) {
        JobSpec s = {};
        cr_assert_eq(job_spec_from_json(old_spec, &s), 0);
        cr_assert_eq(s.output_max_bytes, UINT64_C(256) << 20);
        cr_assert_eq(s.keep_free, UINT64_C(512) << 20);
        job_spec_done(&s);
}

Test(output_record, the_spec_carries_cap_and_keep_free) {
        JobSpec s = {}, t = {};
        cr_assert_eq(job_spec_from_json(old_spec, &s), 0);
        s.output_max_bytes = 1;
        s.keep_free = 0;
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        cr_assert_eq(job_spec_from_json(json, &t), 0);
        cr_assert_eq(t.output_max_bytes, 1);
        cr_assert_eq(t.keep_free, 0);
        job_spec_done(&t);
        s.output_max_bytes = UINT64_MAX;
        free(json);
        json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        cr_assert_eq(job_spec_from_json(json, &t), 0);
        cr_assert_eq(t.output_max_bytes, UINT64_MAX, "infinity");
        job_spec_done(&t);
        job_spec_done(&s);

        /* Of the wrong type: refused, as every other key. */
        char *bad = strdup(old_spec);
        bad[strlen(bad) - 1] = '\0';
        char *with = NULL;
        cr_assert_gt(asprintf(&with, "%s,\"output_max_bytes\":\"big\"}", bad), 0);
        cr_assert_eq(job_spec_from_json(with, &t), -EBADMSG);
        free(bad);
        free(with);
}

static const char result[] = "{\"status\":\"exited\",\"exit_code\":0,\"signal\":0,\"timed_out\":false,"
                             "\"executed\":true,\"contained\":true,\"finished_at\":5,\"dead\":true,"
                             "\"method\":\"cgroup.kill\",\"confirmed_at\":5,\"reason\":\"\"";

Test(output_record, the_result_carries_the_output_or_nothing_of_it) {
        JobResult r = {}, t = {};
        char *json = NULL;
        cr_assert_gt(asprintf(&json, "%s}", result), 0);
        cr_assert_eq(job_result_from_json(json, &r), 0);
        cr_assert_not(r.output_known, "a result from before, or bgrund's for a lost supervisor");
        free(json);

        _cleanup_free_ char *out = NULL;
        cr_assert_eq(job_result_to_json(&r, &out), 0);
        cr_assert_null(strstr(out, "output_"), "nothing said when nothing is known: %s", out);
        free(out);
        out = NULL;

        r.output_known = true;
        r.output_bytes = 5000000;
        r.output_truncated = true;
        r.output_dropped_bytes = 3951424;
        cr_assert_eq(job_result_to_json(&r, &out), 0);
        cr_assert_eq(job_result_from_json(out, &t), 0);
        cr_assert(t.output_known);
        cr_assert_eq(t.output_bytes, 5000000);
        cr_assert(t.output_truncated);
        cr_assert_eq(t.output_dropped_bytes, 3951424);

        cr_assert_gt(asprintf(&json, "%s,\"output_bytes\":10,\"output_truncated\":true,"
                                     "\"output_dropped_bytes\":11}", result), 0);
        cr_assert_eq(job_result_from_json(json, &t), -EBADMSG, "more dropped than written");
        free(json);
        cr_assert_gt(asprintf(&json, "%s,\"output_bytes\":10}", result), 0);
        cr_assert_eq(job_result_from_json(json, &t), -EBADMSG, "all of the output's part or none");
        free(json);
}
