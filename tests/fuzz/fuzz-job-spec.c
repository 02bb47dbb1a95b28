/* SPDX-License-Identifier: MIT */
/* job_spec_from_json(): spec.json as bgrund, the supervisor and the reaper
 * read it. What loads must hold the loader's promises, and
 * job_spec_to_json() of it must load back the same, and print the same. */
#include <errno.h>

#include "fuzz.h"
#include "job-record.h"

static void check_same(const JobSpec *a, const JobSpec *b, const char *json) {
        FUZZ_CHECK(strcmp(a->id, b->id) == 0, "id; json: %s", json);
        FUZZ_CHECK(fuzz_streq0(a->session_id, b->session_id), "session_id; json: %s", json);
        FUZZ_CHECK(fuzz_streq0(a->command, b->command), "command; json: %s", json);
        FUZZ_CHECK(fuzz_streq0(a->cwd, b->cwd), "cwd; json: %s", json);
        FUZZ_CHECK(a->owner == b->owner && a->uid == b->uid && a->gid == b->gid, "owner/uid/gid; json: %s", json);
        FUZZ_CHECK(a->n_groups == b->n_groups, "n_groups %zu != %zu; json: %s", a->n_groups, b->n_groups, json);
        for (size_t i = 0; i < a->n_groups; i++)
                FUZZ_CHECK(a->groups[i] == b->groups[i], "groups[%zu]; json: %s", i, json);
        FUZZ_CHECK(fuzz_streq0(a->user, b->user) && fuzz_streq0(a->home, b->home) && fuzz_streq0(a->shell, b->shell),
                   "user/home/shell; json: %s", json);
        size_t i = 0;
        for (; a->environment[i] && b->environment[i]; i++)
                FUZZ_CHECK(strcmp(a->environment[i], b->environment[i]) == 0, "environment[%zu]; json: %s", i, json);
        FUZZ_CHECK(!a->environment[i] && !b->environment[i], "environment lengths differ; json: %s", json);
        FUZZ_CHECK(a->max_runtime_usec == b->max_runtime_usec, "max_runtime_usec; json: %s", json);
        FUZZ_CHECK(a->mechanism == b->mechanism, "mechanism; json: %s", json);
        FUZZ_CHECK(fuzz_streq0(a->unit, b->unit), "unit; json: %s", json);
        FUZZ_CHECK(a->created_at == b->created_at, "created_at; json: %s", json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *json = fuzz_strndup(data, size);
        JobSpec s = {};

        int r = job_spec_from_json(json, &s);
        if (r < 0) {
                /* Malformed, or of a newer format than this build reads. */
                FUZZ_CHECK(r == -EBADMSG || r == -EPROTONOSUPPORT, "job_spec_from_json: %d", r);
                FUZZ_CHECK(!s.command && !s.environment && !s.groups && !s.id[0], "a failed load wrote its output");
                free(json);
                return 0;
        }
        /* A spec's id names a directory: nothing else may load. */
        FUZZ_CHECK(job_id_is_valid(s.id), "invalid id '%s' loaded", s.id);
        FUZZ_CHECK(!strchr(s.id, '/') && !strchr(s.id, '.'), "id '%s'", s.id);
        FUZZ_CHECK((unsigned) s.mechanism < _MECHANISM_MAX, "mechanism %d", s.mechanism);
        FUZZ_CHECK(s.session_id && s.command && s.cwd && s.user && s.home && s.shell && s.unit && s.environment,
                   "a string of a loaded spec is NULL");
        FUZZ_CHECK(s.groups || s.n_groups == 0, "groups");

        char *out = NULL;
        r = job_spec_to_json(&s, &out);
        FUZZ_CHECK(r == 0, "job_spec_to_json: %d", r);

        JobSpec t = {};
        r = job_spec_from_json(out, &t);
        FUZZ_CHECK(r == 0, "its own JSON does not load (%d): %s", r, out);
        check_same(&s, &t, out);

        char *again = NULL;
        FUZZ_CHECK(job_spec_to_json(&t, &again) == 0, "job_spec_to_json");
        FUZZ_CHECK(strcmp(out, again) == 0, "printed twice differently:\n%s\n%s", out, again);

        free(again);
        free(out);
        job_spec_done(&t);
        job_spec_done(&s);
        free(json);
        return 0;
}
