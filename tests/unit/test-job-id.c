/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "job-id.h"
#include "macro.h"

#define N_IDS 10000

static int cmp_id(const void *a, const void *b) {
        return strcmp(a, b);
}

Test(job_id, generate_charset_and_length) {
        for (unsigned i = 0; i < 1000; i++) {
                char id[JOB_ID_MAX];

                memset(id, 'X', sizeof(id));
                cr_assert_eq(job_id_generate(id), 0);
                cr_assert_eq(strlen(id), JOB_ID_LEN, "id \"%s\" has the wrong length", id);
                cr_assert_eq(strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789"), JOB_ID_LEN,
                             "id \"%s\" has a character outside [a-z0-9]", id);
                cr_assert(job_id_is_valid(id), "generated id \"%s\" is not valid", id);
        }
}

Test(job_id, generate_unique) {
        char (*ids)[JOB_ID_MAX] = calloc(N_IDS, JOB_ID_MAX);

        cr_assert_not_null(ids);
        for (unsigned i = 0; i < N_IDS; i++)
                cr_assert_eq(job_id_generate(ids[i]), 0);

        qsort(ids, N_IDS, JOB_ID_MAX, cmp_id);
        for (unsigned i = 1; i < N_IDS; i++)
                cr_assert_str_neq(ids[i - 1], ids[i], "duplicate id %s", ids[i]);

        free(ids);
}

Test(job_id, generate_uses_whole_alphabet) {
        /* 10000 ids are 100000 characters; a character missing from them
         * means the mapping from random bytes is broken, not bad luck. */
        static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
        unsigned seen[256] = {};

        for (unsigned i = 0; i < N_IDS; i++) {
                char id[JOB_ID_MAX];

                cr_assert_eq(job_id_generate(id), 0);
                for (const char *p = id; *p; p++)
                        seen[(unsigned char) *p]++;
        }

        for (const char *p = alphabet; *p; p++)
                cr_assert_gt(seen[(unsigned char) *p], 0, "'%c' never generated", *p);
}

Test(job_id, validation) {
        static const char *const valid[] = {
                "abcdefghij",
                "0123456789",
                "a1b2c3d4e5",
                "zzzzzzzzzz",
        };
        static const char *const invalid[] = {
                "",
                "abcdefghi",    /* 9 */
                "abcdefghijk",  /* 11 */
                "Abcdefghij",
                "abcdefghiJ",
                "abcd/efghi",
                "abcd.efghi",
                "..........",
                "abcd-efghi",
                "abcd_efghi",
                "abcd efghi",
                "abcdefghi\n",
                "abc\xc3\xa9" "defgh",
                "../../etc/",
        };

        cr_assert_not(job_id_is_valid(NULL));

        for (size_t i = 0; i < ELEMENTSOF(valid); i++)
                cr_assert(job_id_is_valid(valid[i]), "\"%s\" should be valid", valid[i]);
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
                cr_assert_not(job_id_is_valid(invalid[i]), "\"%s\" should be invalid", invalid[i]);
}
