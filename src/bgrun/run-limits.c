/* SPDX-License-Identifier: MIT */
#include "manager-call.h"
#include "json-util.h"
#include "log.h"
#include "run-limits.h"

void run_limits_prepare(LaunchArgs *launch, bool wait, bool tty, bool strict) {
        if (wait && !tty)
                launch_args_set(launch, LAUNCH_OPTION_BIND_TO_CALLER, (LaunchValue) { .u64 = 1 });
        if (strict)
                launch_args_set(launch, LAUNCH_OPTION_ENFORCE_LIMITS, (LaunchValue) { .u64 = 1 });
}

void run_limits_note_unenforced(sd_bus *bus, const char *id, const LaunchArgs *launch, bool strict) {
        if (strict || launch_args_is_set(launch, LAUNCH_OPTION_ENFORCE_LIMITS) ||
            !(launch_args_is_set(launch, LAUNCH_OPTION_MEMORY_MAX) || launch_args_is_set(launch, LAUNCH_OPTION_TASKS_MAX) ||
              launch_args_is_set(launch, LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC)))
                return;
        _cleanup_json_ json_object *rec = NULL;
        json_object *a;
        /* A warning only: the job runs whatever this Get says. */
        if (get_record(bus, id, &rec) < 0 || !json_object_object_get_ex(rec, "limits_unenforced", &a) ||
            !json_object_is_type(a, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(a, i));
                if (name)
                        log_warning("%s is recorded but not enforced: the job's cgroup has no controller for it "
                                    "(run --strict-limits refuses such a job instead).", name);
        }
}
