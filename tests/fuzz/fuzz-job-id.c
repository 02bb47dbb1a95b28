/* SPDX-License-Identifier: MIT */
/* job_id_is_valid(): ids come from callers and name directories on disk.
 * Valid must mean exactly JOB_ID_LEN characters of [a-z0-9]: never a '/' or
 * a '.', never another length. Checked against that model, on the input as a
 * string and on every suffix of it (so lengths around JOB_ID_LEN come up
 * often). */
#include <stdbool.h>

#include "fuzz.h"
#include "job-id.h"

static bool model(const char *s) {
        if (strlen(s) != JOB_ID_LEN)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
                        return false;
        return true;
}

static void check(const char *s) {
        bool valid = job_id_is_valid(s);
        FUZZ_CHECK(valid == model(s), "job_id_is_valid('%s') = %d", s, valid);
        if (valid) {
                FUZZ_CHECK(strlen(s) == JOB_ID_LEN, "a valid id of %zu characters", strlen(s));
                FUZZ_CHECK(!strchr(s, '/') && !strchr(s, '.'), "a valid id '%s' with '/' or '.'", s);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool once;
        if (!once) {
                once = true;
                FUZZ_CHECK(!job_id_is_valid(NULL), "NULL is valid");
                char id[JOB_ID_MAX];
                FUZZ_CHECK(job_id_generate(id) == 0, "job_id_generate");
                FUZZ_CHECK(job_id_is_valid(id), "a generated id '%s' is not valid", id);
        }

        char *s = fuzz_strndup(data, size);
        size_t n = strlen(s);
        for (size_t i = 0; i <= n; i++)
                check(s + i);

        /* The same bytes exactly JOB_ID_LEN long, when there are enough. */
        if (n >= JOB_ID_LEN) {
                s[JOB_ID_LEN] = '\0';
                check(s);
        }
        free(s);
        return 0;
}
