/* SPDX-License-Identifier: MIT */
/* job_result_from_json(): result.json, the final word on how a job ended. */
#include <errno.h>

#include "fuzz.h"
#include "job-record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *json = fuzz_strndup(data, size);
        JobResult res;

        /* Outputs are written only on success: poison, and check. */
        memset(&res, 0xa5, sizeof res);
        int r = job_result_from_json(json, &res);
        if (r < 0) {
                /* Malformed, or of a newer format than this build reads. */
                FUZZ_CHECK(r == -EBADMSG || r == -EPROTONOSUPPORT, "job_result_from_json: %d", r);
                for (size_t i = 0; i < sizeof res; i++)
                        FUZZ_CHECK(((const uint8_t *) &res)[i] == 0xa5, "a failed load wrote its output");
                free(json);
                return 0;
        }
        /* A result is final: "running" is not one. */
        FUZZ_CHECK(res.status > JOB_RUNNING && res.status < _JOB_STATUS_MAX, "status %d", res.status);
        FUZZ_CHECK((unsigned) res.method < _TEARDOWN_METHOD_MAX, "method %d", res.method);
        FUZZ_CHECK(memchr(res.reason, '\0', sizeof res.reason), "unterminated reason");

        char *out = NULL;
        r = job_result_to_json(&res, &out);
        FUZZ_CHECK(r == 0, "job_result_to_json: %d", r);

        JobResult back = {};
        r = job_result_from_json(out, &back);
        FUZZ_CHECK(r == 0, "its own JSON does not load (%d): %s", r, out);
        FUZZ_CHECK(res.status == back.status && res.exit_code == back.exit_code && res.signal == back.signal,
                   "status/exit_code/signal; json: %s", out);
        FUZZ_CHECK(res.timed_out == back.timed_out && res.executed == back.executed &&
                           res.contained == back.contained && res.dead == back.dead,
                   "a flag; json: %s", out);
        FUZZ_CHECK(res.finished_at == back.finished_at && res.confirmed_at == back.confirmed_at,
                   "a time; json: %s", out);
        FUZZ_CHECK(res.method == back.method, "method; json: %s", out);
        FUZZ_CHECK(strcmp(res.reason, back.reason) == 0, "reason; json: %s", out);

        char *again = NULL;
        FUZZ_CHECK(job_result_to_json(&back, &again) == 0, "job_result_to_json");
        FUZZ_CHECK(strcmp(out, again) == 0, "printed twice differently:\n%s\n%s", out, again);

        free(again);
        free(out);
        free(json);
        return 0;
}
