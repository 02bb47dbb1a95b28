/* SPDX-License-Identifier: MIT */
/* The sandbox profiles: the options each sets, and a job's options named
 * back as the profile they are. */
#include <criterion/criterion.h>

#include "launch-options.h"
#include "macro.h"
#include "sandbox-profile.h"
#include "strv.h"

static JobSpec s;

static void teardown(void) {
        launch_options_free_fields(&s);
}

TestSuite(sandbox_profile, .fini = teardown);

Test(sandbox_profile, names_round_trip) {
        for (int p = 0; p < _SANDBOX_PROFILE_MAX; p++)
                cr_assert_eq(sandbox_profile_from_string(sandbox_profile_to_string(p)), p);
        cr_assert_eq(sandbox_profile_from_string("Workspace"), -EINVAL);
        cr_assert_eq(sandbox_profile_from_string(NULL), -EINVAL);
}

/* workspace: strict, home read-only, the cwd writable (its .git kept from
 * it by ProtectGit, every sandbox's), a /tmp of its own, no network unless
 * kept. */
Test(sandbox_profile, workspace_sets_its_options) {
        s.cwd = (char *) "/src/app";
        cr_assert_eq(sandbox_profile_spec(SANDBOX_PROFILE_WORKSPACE, s.cwd, false, &s), 0);
        cr_assert_eq(s.protect_system, PROTECT_SYSTEM_STRICT);
        cr_assert_eq(s.protect_home, PROTECT_HOME_READ_ONLY);
        cr_assert(s.private_tmp && s.private_network);
        cr_assert_eq(strv_length(s.read_write_paths), 1);
        cr_assert_str_eq(s.read_write_paths[0], "/src/app");
        cr_assert_null(s.read_only_paths);
        cr_assert_null(s.inaccessible_paths);
        cr_assert(s.protect_git);
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");

        /* With the network kept it is still the profile. */
        cr_assert_eq(sandbox_profile_spec(SANDBOX_PROFILE_WORKSPACE, "/", true, &s), 0);
        cr_assert(!s.private_network);
        /* Wherever the job runs: bgrun mcp fixes the workspace apart from cwd. */
        s.cwd = (char *) "/elsewhere";
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");
        /* Its git left as any file is still the profile. */
        s.protect_git = false;
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");
        /* A read-only path more is not the profile. */
        char *ro[] = { "/other", NULL };
        s.read_only_paths = ro;
        cr_assert_str_eq(sandbox_profile_name(&s), "custom");
        s.read_only_paths = NULL;
}

/* bgrun mcp's floor: more writable directories than the workspace
 * (--writable), and the names its network reaches (--allow-domain), are
 * still the workspace profile; a read-only profile has no writable path. */
Test(sandbox_profile, workspace_with_more_paths_and_names) {
        cr_assert_eq(sandbox_profile_spec(SANDBOX_PROFILE_WORKSPACE, "/src/app", false, &s), 0);
        size_t n = 1;
        cr_assert_eq(strv_consume(&s.read_write_paths, &n, strdup("/home/u/.cache/pip")), 0);
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");
        /* Not with the home directory, or one above it, writable too. */
        s.home = (char *) "/home/u";
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");
        cr_assert_eq(strv_consume(&s.read_write_paths, &n, strdup("/home")), 0);
        cr_assert_str_eq(sandbox_profile_name(&s), "custom");
        free(s.read_write_paths[--n]);
        s.read_write_paths[n] = NULL;
        cr_assert_eq(strv_consume(&s.read_write_paths, &n, strdup("/home/u")), 0);
        cr_assert_str_eq(sandbox_profile_name(&s), "custom");
        free(s.read_write_paths[--n]);
        s.read_write_paths[n] = NULL;
        s.home = NULL;
        char *names[] = { "pypi.org", NULL };
        s.allowed_domains = names;
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");
        s.allowed_domains = NULL;
        /* The same paths with the network kept: still the profile. */
        s.private_network = false;
        cr_assert_str_eq(sandbox_profile_name(&s), "workspace");
        /* A profile's options replace the names as well. */
        char **own = calloc(2, sizeof(char *));
        own[0] = strdup("example.com");
        s.allowed_domains = own;
        cr_assert_eq(sandbox_profile_spec(SANDBOX_PROFILE_READ_ONLY, "/src/app", false, &s), 0);
        cr_assert_null(s.allowed_domains);
        cr_assert_null(s.read_write_paths);
        cr_assert_str_eq(sandbox_profile_name(&s), "read-only");
}

Test(sandbox_profile, read_only_off_and_custom) {
        s.cwd = (char *) "/w";
        cr_assert_str_eq(sandbox_profile_name(&s), "off");
        cr_assert_eq(sandbox_profile_spec(SANDBOX_PROFILE_READ_ONLY, s.cwd, false, &s), 0);
        cr_assert_null(s.read_write_paths);
        cr_assert_str_eq(sandbox_profile_name(&s), "read-only");
        s.protect_home = PROTECT_HOME_YES;
        cr_assert_str_eq(sandbox_profile_name(&s), "custom");
        cr_assert_eq(sandbox_profile_spec(SANDBOX_PROFILE_OFF, s.cwd, false, &s), 0);
        cr_assert_eq(s.protect_system, PROTECT_SYSTEM_NO);
        cr_assert(s.private_network, "off without a network is PrivateNetwork alone");
        cr_assert_str_eq(sandbox_profile_name(&s), "custom");
}
