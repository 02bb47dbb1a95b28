/* SPDX-License-Identifier: MIT */
/* The sandbox profiles as the sandbox options they set (sandbox-profile.h),
 * and a job's options back to the profile they are. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch-options.h"
#include "macro.h"
#include "sandbox-plan.h"
#include "sandbox-profile.h"
#include "strv.h"

static const char *const profile_table[_SANDBOX_PROFILE_MAX] = {
        [SANDBOX_PROFILE_OFF] = "off",
        [SANDBOX_PROFILE_WORKSPACE] = "workspace",
        [SANDBOX_PROFILE_READ_ONLY] = "read-only",
};

const char *sandbox_profile_to_string(SandboxProfile p) {
        return (unsigned) p < _SANDBOX_PROFILE_MAX ? profile_table[p] : NULL;
}

int sandbox_profile_from_string(const char *s) {
        for (int i = 0; s && i < _SANDBOX_PROFILE_MAX; i++)
                if (streq(s, profile_table[i]))
                        return i;
        return -EINVAL;
}

/* A list of one string, malloc'd. */
static char **one(char *s) {
        if (!s)
                return NULL;
        char **l = calloc(2, sizeof(char *));
        if (!l) {
                free(s);
                return NULL;
        }
        l[0] = s;
        return l;
}

int sandbox_profile_spec(SandboxProfile p, const char *cwd, bool network, JobSpec *s) {
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++)
                if (launch_options[i].flags & LAUNCH_SANDBOX) {
                        const LaunchOptionInfo *o = &launch_options[i];
                        if (o->type == LAUNCH_VALUE_PATHS) {
                                char ***l = (char ***) ((char *) s + o->offset);
                                strv_free(TAKE_PTR(*l));
                        }
                }
        s->private_network = s->private_tmp = false;
        s->protect_system = PROTECT_SYSTEM_NO;
        s->protect_home = PROTECT_HOME_NO;
        s->protect_git = true;
        strv_free(TAKE_PTR(s->restrict_address_families));
        strv_free(TAKE_PTR(s->allowed_domains));
        if (p == SANDBOX_PROFILE_OFF) {
                s->private_network = !network;
                return 0;
        }
        s->protect_system = PROTECT_SYSTEM_STRICT;
        s->protect_home = PROTECT_HOME_READ_ONLY;
        s->private_tmp = true;
        s->private_network = !network;
        /* Its .git is ProtectGit's (every sandbox's). */
        if (p == SANDBOX_PROFILE_WORKSPACE) {
                s->read_write_paths = one(strdup(cwd));
                if (!s->read_write_paths)
                        return -ENOMEM;
        }
        return 0;
}

bool sandbox_profile_writable_beside(const char *path, const char *home) {
        size_t n = strlen(path);
        if (streq(path, "/"))
                return false;
        return !home || !home[0] || (!streq(path, home) && !(strncmp(home, path, n) == 0 && home[n] == '/'));
}

const char *sandbox_profile_name(const JobSpec *s) {
        if (!sandbox_requested(s))
                return profile_table[SANDBOX_PROFILE_OFF];
        /* A workspace is the first writable path's, wherever the job runs
         * (bgrun mcp fixes it apart from a call's cwd). */
        size_t n_writable = strv_length(s->read_write_paths);
        const char *workspace = n_writable >= 1 ? s->read_write_paths[0] : "/";
        bool more_allowed = true;
        for (size_t i = 1; i < n_writable; i++)
                more_allowed = more_allowed && sandbox_profile_writable_beside(s->read_write_paths[i], s->home);
        for (SandboxProfile p = SANDBOX_PROFILE_WORKSPACE; p < _SANDBOX_PROFILE_MAX; p++) {
                JobSpec t = {};
                int r = sandbox_profile_spec(p, workspace, !s->private_network, &t);
                /* Still the profile: with its git out of the sandbox's care,
                 * with more writable paths than its workspace (bgrun mcp
                 * --writable), with the names its network reaches. Borrowed
                 * for the comparison. */
                t.protect_git = s->protect_git;
                char **own = t.read_write_paths;
                if (p == SANDBOX_PROFILE_WORKSPACE && n_writable >= 1 && more_allowed)
                        t.read_write_paths = s->read_write_paths;
                t.allowed_domains = s->allowed_domains;
                bool same = r >= 0 && launch_options_same_sandbox(s, &t);
                t.read_write_paths = own;
                t.allowed_domains = NULL;
                launch_options_free_fields(&t);
                if (same)
                        return profile_table[p];
        }
        return "custom";
}
