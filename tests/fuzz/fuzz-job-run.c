/* SPDX-License-Identifier: MIT */
/* job_run_from_json(): run.json, written by the supervisor, read by bgrund
 * and the reaper (the pids and tokens in it decide what gets signalled). */
#include <errno.h>

#include "fuzz.h"
#include "job-record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *json = fuzz_strndup(data, size);
        JobRun run = {};

        int r = job_run_from_json(json, &run);
        if (r < 0) {
                /* Malformed, or of a newer format than this build reads. */
                FUZZ_CHECK(r == -EBADMSG || r == -EPROTONOSUPPORT, "job_run_from_json: %d", r);
                FUZZ_CHECK(!run.cgroup && !run.pid && !run.start_token[0], "a failed load wrote its output");
                free(json);
                return 0;
        }
        FUZZ_CHECK(run.pid >= 0 && run.supervisor_pid >= 0, "negative pid %d / %d", run.pid, run.supervisor_pid);
        FUZZ_CHECK(memchr(run.start_token, '\0', sizeof run.start_token) &&
                           memchr(run.supervisor_token, '\0', sizeof run.supervisor_token),
                   "unterminated token");
        FUZZ_CHECK(run.cgroup, "cgroup is NULL");

        char *out = NULL;
        r = job_run_to_json(&run, &out);
        FUZZ_CHECK(r == 0, "job_run_to_json: %d", r);

        JobRun back = {};
        r = job_run_from_json(out, &back);
        FUZZ_CHECK(r == 0, "its own JSON does not load (%d): %s", r, out);
        FUZZ_CHECK(run.pid == back.pid && run.supervisor_pid == back.supervisor_pid, "pids; json: %s", out);
        FUZZ_CHECK(strcmp(run.start_token, back.start_token) == 0, "start_token; json: %s", out);
        FUZZ_CHECK(strcmp(run.supervisor_token, back.supervisor_token) == 0, "supervisor_token; json: %s", out);
        FUZZ_CHECK(strcmp(run.cgroup, back.cgroup) == 0, "cgroup; json: %s", out);
        FUZZ_CHECK(run.started_at == back.started_at, "started_at; json: %s", out);

        char *again = NULL;
        FUZZ_CHECK(job_run_to_json(&back, &again) == 0, "job_run_to_json");
        FUZZ_CHECK(strcmp(out, again) == 0, "printed twice differently:\n%s\n%s", out, again);

        free(again);
        free(out);
        job_run_done(&back);
        job_run_done(&run);
        free(json);
        return 0;
}
