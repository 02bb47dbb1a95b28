/* SPDX-License-Identifier: MIT */
/* grant_from_json(): grant.json, the crash-safe record that a job's
 * containment exists; an open one names a cgroup that may hold processes. */
#include <errno.h>

#include "fuzz.h"
#include "grant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *json = fuzz_strndup(data, size);
        Grant g = {};

        int r = grant_from_json(json, &g);
        if (r < 0) {
                /* Malformed, or of a newer format than this build reads. */
                FUZZ_CHECK(r == -EBADMSG || r == -EPROTONOSUPPORT, "grant_from_json: %d", r);
                FUZZ_CHECK(!g.unit && !g.cgroup, "a failed load wrote its output");
                free(json);
                return 0;
        }
        FUZZ_CHECK(g.state == GRANT_OPEN || g.state == GRANT_RELEASED, "state %d", g.state);
        FUZZ_CHECK((unsigned) g.mechanism < _MECHANISM_MAX, "mechanism %d", g.mechanism);
        FUZZ_CHECK((unsigned) g.method < _TEARDOWN_METHOD_MAX, "method %d", g.method);
        /* Released only with a confirmed teardown. */
        FUZZ_CHECK(g.state != GRANT_RELEASED || g.dead, "a released grant that is not dead");
        FUZZ_CHECK(g.unit && g.cgroup, "unit or cgroup NULL");

        char *out = NULL;
        r = grant_to_json(&g, &out);
        FUZZ_CHECK(r == 0, "grant_to_json: %d", r);

        Grant back = {};
        r = grant_from_json(out, &back);
        FUZZ_CHECK(r == 0, "its own JSON does not load (%d): %s", r, out);
        FUZZ_CHECK(g.state == back.state && g.mechanism == back.mechanism && g.method == back.method,
                   "state/mechanism/method; json: %s", out);
        FUZZ_CHECK(strcmp(g.unit, back.unit) == 0 && strcmp(g.cgroup, back.cgroup) == 0, "unit/cgroup; json: %s",
                   out);
        FUZZ_CHECK(g.opened_at == back.opened_at && g.released_at == back.released_at && g.dead == back.dead,
                   "times/dead; json: %s", out);

        char *again = NULL;
        FUZZ_CHECK(grant_to_json(&back, &again) == 0, "grant_to_json");
        FUZZ_CHECK(strcmp(out, again) == 0, "printed twice differently:\n%s\n%s", out, again);

        free(again);
        free(out);
        grant_done(&back);
        grant_done(&g);
        free(json);
        return 0;
}
