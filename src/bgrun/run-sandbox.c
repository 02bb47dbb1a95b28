/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "log.h"
#include "macro.h"
#include "run-sandbox.h"
#include "sandbox-profile.h"
#include "strv.h"

/* list followed by more, in one new list (the strings are copied). */
static char **concat(char *const *list, char *const *more) {
        size_t n = strv_length(list), m = strv_length(more);
        _cleanup_strv_free_ char **l = calloc(n + m + 1, sizeof(char *));
        if (!l)
                return NULL;
        for (size_t i = 0; i < n + m; i++)
                if (!(l[i] = strdup(i < n ? list[i] : more[i - n])))
                        return NULL;
        return TAKE_PTR(l);
}

int run_sandbox_prepare(LaunchArgs *launch, int profile, bool network, bool no_network, const char *cwd,
                        JobSpec *keep) {
        /* Names through the job's proxy: from a network of its own. */
        if (launch_args_is_set(launch, LAUNCH_OPTION_ALLOWED_DOMAINS) &&
            !launch_args_is_set(launch, LAUNCH_OPTION_PRIVATE_NETWORK))
                launch_args_set(launch, LAUNCH_OPTION_PRIVATE_NETWORK, (LaunchValue) { .u64 = 1 });
        if (profile < 0) {
                if (no_network && !launch_args_is_set(launch, LAUNCH_OPTION_PRIVATE_NETWORK))
                        launch_args_set(launch, LAUNCH_OPTION_PRIVATE_NETWORK, (LaunchValue) { .u64 = 1 });
                return 0;
        }
        /* The directory as the kernel names it: no "..", no symlink, as a
         * sandbox path must be. One that does not exist is bgrund's to refuse. */
        char real[PATH_MAX];
        int r = sandbox_profile_spec(profile, realpath(cwd, real) ? real : cwd, network && !no_network, keep);
        if (r < 0)
                return log_oom();
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *o = &launch_options[i];
                if (!(o->flags & LAUNCH_SANDBOX) || !launch_option_is_set(i, keep))
                        continue;
                if (o->type == LAUNCH_VALUE_PATHS && launch_args_is_set(launch, i)) {
                        char ***field = (char ***) ((char *) keep + o->offset);
                        char **both = concat(*field, launch->values[i].strv);
                        if (!both)
                                return log_oom();
                        strv_free(*field);
                        *field = both;
                } else if (launch_args_is_set(launch, i))
                        continue; /* -p's */
                launch_args_set(launch, i, launch_option_get(i, keep));
        }
        return 0;
}
