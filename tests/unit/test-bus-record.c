/* SPDX-License-Identifier: MIT */
/* The record's containment part as bgrund puts it on the bus, on messages
 * built here (as test-bus-args.c builds them): contained is computed for a
 * running job and read from the result once the job has ended. */
#include <criterion/criterion.h>
#include <sys/socket.h>

#include "bus-fixture.h"
#include "bus-json.h"
#include "bus-record.h"
#include "macro.h"

TestSuite(bus_record, .init = bus_fixture_setup, .fini = bus_fixture_teardown);

/* containment.KEY of v's record, read back through bus-json. */
static bool containment_bool(const JobView *v, const char *key) {
        sd_bus_message *m = bus_fixture_message();
        cr_assert_geq(record_appenders[RECORD_KEY_CONTAINMENT](m, v), 0);
        bus_fixture_seal(m);
        json_object *o = NULL, *b = NULL;
        cr_assert_eq(bus_json_read(m, &o), 1);
        cr_assert(json_object_object_get_ex(o, key, &b), "containment.%s", key);
        cr_assert(json_object_is_type(b, json_type_boolean));
        bool r = json_object_get_boolean(b);
        json_object_put(o);
        sd_bus_message_unref(m);
        return r;
}

static char cgroup[] = "/bgrun.slice/bgrun-job-x.scope/payload", unit[] = "bgrun-job-x.scope";

Test(bus_record, a_running_job_is_contained_by_the_rule) {
        JobSpec spec = { .mechanism = MECHANISM_SYSTEMD, .unit = unit };
        JobRun run = { .cgroup = cgroup };
        cr_assert(containment_bool(&(JobView) { .spec = &spec, .run = &run, .status = JOB_RUNNING }, "contained"));
        cr_assert(containment_bool(&(JobView) { .spec = &spec, .run = &run, .status = JOB_RUNNING }, "executed"));
        spec.mechanism = MECHANISM_PROCESS_GROUP;
        cr_assert_not(containment_bool(&(JobView) { .spec = &spec, .run = &run, .status = JOB_RUNNING }, "contained"));
}

/* The result says what its writer found: the record shows that, even where
 * the rule applied to what bgrund holds now would say otherwise. */
Test(bus_record, an_ended_job_shows_its_result) {
        JobSpec spec = { .mechanism = MECHANISM_SYSTEMD, .unit = unit };
        JobRun run = { .cgroup = cgroup };
        JobResult res = { .status = JOB_EXITED, .executed = true, .contained = false };
        cr_assert_not(containment_bool(&(JobView) { .spec = &spec, .run = &run, .result = &res, .status = JOB_EXITED },
                                       "contained"));
        res.contained = true;
        cr_assert(containment_bool(&(JobView) { .spec = &spec, .result = &res, .status = JOB_EXITED }, "contained"),
                  "no run left in memory");
}
