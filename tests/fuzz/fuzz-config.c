/* SPDX-License-Identifier: MIT */
/* config_parse_string(): one configuration file's text on top of the
 * defaults. Whatever parses must be formatted by config_format() into text
 * that parses back to the same configuration, and formats the same again. */
#include <errno.h>
#include <inttypes.h>

#include "config.h"
#include "fuzz.h"

static void check_same(const BgrunConfig *a, const BgrunConfig *b, const char *text) {
        FUZZ_CHECK(a->mode == b->mode, "mode %d != %d; formatted:\n%s", a->mode, b->mode, text);
        FUZZ_CHECK(a->n_mechanisms == b->n_mechanisms, "n_mechanisms %u != %u; formatted:\n%s", a->n_mechanisms,
                   b->n_mechanisms, text);
        for (unsigned i = 0; i < a->n_mechanisms; i++)
                FUZZ_CHECK(a->mechanisms[i] == b->mechanisms[i], "mechanism %u; formatted:\n%s", i, text);
#define SAME(f)                                                                                          \
        FUZZ_CHECK(a->limits.f == b->limits.f, "limits." #f " %" PRIu64 " != %" PRIu64 "; formatted:\n%s", \
                   a->limits.f, b->limits.f, text)
        SAME(max_running_jobs);
        SAME(max_records);
        SAME(retention_usec);
        SAME(output_max_bytes);
        SAME(output_max_bytes_per_user);
        SAME(tasks_max);
        SAME(memory_max);
        SAME(cpu_weight);
        SAME(keep_free);
#undef SAME
}

/* What config_load() promises of any configuration it returns. */
static void check_valid(const BgrunConfig *c) {
        FUZZ_CHECK(c->mode == CONTAINMENT_ENFORCING || c->mode == CONTAINMENT_REPORT_ONLY, "mode %d", c->mode);
        FUZZ_CHECK(c->n_mechanisms >= 1 && c->n_mechanisms <= _MECHANISM_MAX, "n_mechanisms %u", c->n_mechanisms);
        for (unsigned i = 0; i < c->n_mechanisms; i++) {
                FUZZ_CHECK((unsigned) c->mechanisms[i] < _MECHANISM_MAX, "mechanism %d", c->mechanisms[i]);
                for (unsigned j = 0; j < i; j++)
                        FUZZ_CHECK(c->mechanisms[i] != c->mechanisms[j], "duplicate mechanism");
        }
        FUZZ_CHECK(c->limits.max_running_jobs >= 1 && c->limits.max_records >= 1, "a count of 0");
        FUZZ_CHECK(c->limits.cpu_weight >= 1 && c->limits.cpu_weight <= 10000, "CPUWeight %" PRIu64,
                   c->limits.cpu_weight);
        FUZZ_CHECK(c->limits.tasks_max >= 1 && c->limits.output_max_bytes >= 1 &&
                           c->limits.output_max_bytes_per_user >= 1 && c->limits.memory_max >= 1,
                   "a limit of 0");
        FUZZ_CHECK(c->limits.keep_free != UINT64_MAX, "KeepFree=infinity");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size), *error = NULL;
        BgrunConfig c;

        config_init(&c);
        int r = config_parse_string("fuzz.conf", text, &c, &error);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL, "config_parse_string: %d", r);
                FUZZ_CHECK(error, "a rejected text without a message");
                FUZZ_CHECK(strncmp(error, "fuzz.conf:", strlen("fuzz.conf:")) == 0, "message '%s'", error);
                free(error);
                free(text);
                return 0;
        }
        FUZZ_CHECK(!error, "a message for a good text: %s", error);
        check_valid(&c);

        char *formatted = NULL;
        r = config_format(&c, &formatted);
        FUZZ_CHECK(r == 0, "config_format: %d", r);

        BgrunConfig d;
        config_init(&d);
        /* Start d from something else than the defaults: every key is given. */
        d.mode = c.mode == CONTAINMENT_ENFORCING ? CONTAINMENT_REPORT_ONLY : CONTAINMENT_ENFORCING;
        memset(&d.limits, 0x5a, sizeof d.limits);
        r = config_parse_string("formatted", formatted, &d, &error);
        FUZZ_CHECK(r == 0, "the formatted configuration does not load: %s\n%s", error ?: "", formatted);
        check_same(&c, &d, formatted);

        char *again = NULL;
        FUZZ_CHECK(config_format(&d, &again) == 0, "config_format");
        FUZZ_CHECK(strcmp(formatted, again) == 0, "formatted twice differently:\n%s\n--\n%s", formatted, again);

        free(again);
        free(formatted);
        free(text);
        return 0;
}
