/* SPDX-License-Identifier: MIT */
/* bgrun mcp: options to the server. */

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domain-list.h"
#include "launch-options.h"
#include "log.h"
#include "macro.h"
#include "mcp-server.h"
#include "sandbox-profile.h"
#include "strv.h"
#include "verb-mcp.h"

void verb_mcp_prepare(const Args *args) {
        char dir[64];
        struct stat st;

        if (args->target.transport != BUS_TRANSPORT_USER || args->target.address || args->target.host)
                return;
        if (getenv("DBUS_SESSION_BUS_ADDRESS") || getenv("XDG_RUNTIME_DIR"))
                return;
        snprintf(dir, sizeof dir, "/run/user/%u", (unsigned) getuid());
        /* Only a directory of this user's, as systemd-logind makes it. */
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
                return;
        log_debug("No XDG_RUNTIME_DIR: using %s.", dir);
        (void) setenv("XDG_RUNTIME_DIR", dir, 0);
}

/* --writable's directories as the kernel names them, each one that exists,
 * and never /, the home directory itself or a parent of it (whose shell
 * start-up files would be git's hooks again): into *ret (malloc'd). */
static int writable_dirs(char *const *dirs, char ***ret) {
        char home[PATH_MAX] = "";
        const char *h = getenv("HOME");
        struct passwd *pw = h ? NULL : getpwuid(getuid());
        if (!realpath(h ?: pw ? pw->pw_dir : "/", home))
                home[0] = '\0';
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        for (char *const *d = dirs; d && *d; d++) {
                char real[PATH_MAX];
                struct stat st;
                if (!realpath(*d, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
                        return log_usage_error("--writable %s: not a directory that is there.", *d);
                if (!sandbox_profile_writable_beside(real, home))
                        return log_usage_error("--writable %s: not / nor the home directory or a directory above it "
                                               "(its shell's start-up files would run what a job wrote there).", *d);
                if (n + 1 >= LAUNCH_PATHS_MAX)
                        return log_usage_error("At most %d --writable directories.", LAUNCH_PATHS_MAX - 1);
                if (strv_consume(&l, &n, strdup(real)) < 0)
                        return log_oom();
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int verb_mcp(sd_bus *bus, const Args *args) {
        McpOptions o = {
                .session = args->session,
                .keep_jobs = args->keep_jobs,
                .output_limit = args->output_limit,
                .remote = bus_target_is_remote(&args->target),
                .sandbox = args->sandbox < 0 ? SANDBOX_PROFILE_OFF : args->sandbox,
                .network = args->network,
                .no_protect_git = args->no_protect_git,
        };
        /* The workspace is fixed now, as the kernel names it: a call's cwd
         * never moves it. */
        char workspace[PATH_MAX];
        if (args->workspace && o.sandbox == SANDBOX_PROFILE_OFF)
                return log_usage_error("--workspace goes with --sandbox (the directory a sandboxed run may write).");
        if (launch_args_is_set(&args->launch, LAUNCH_OPTION_ALLOWED_DOMAINS)) {
                o.allowed_domains = args->launch.values[LAUNCH_OPTION_ALLOWED_DOMAINS].strv;
                if (o.sandbox == SANDBOX_PROFILE_OFF)
                        return log_usage_error("--allow-domain goes with --sandbox (the names a sandboxed run may reach).");
                size_t n = 0;
                for (char *const *d = o.allowed_domains; *d; d++, n++)
                        if (!domain_entry_valid(*d))
                                return log_usage_error("Invalid --allow-domain '%s' (a host name, *.NAME for its "
                                                       "subdomains, optionally :PORT; no address).", *d);
                if (n > DOMAIN_LIST_MAX)
                        return log_usage_error("At most %d --allow-domain names.", DOMAIN_LIST_MAX);
        }
        if ((args->writable || args->no_protect_git) && o.sandbox == SANDBOX_PROFILE_OFF)
                return log_usage_error("--writable and --no-protect-git go with --sandbox.");
        _cleanup_strv_free_ char **writable = NULL;
        int r = writable_dirs(args->writable, &writable);
        if (r < 0)
                return r;
        o.writable = writable;
        if (o.sandbox != SANDBOX_PROFILE_OFF) {
                if (!realpath(args->workspace ?: ".", workspace))
                        return log_error_errno(errno, "Cannot find the workspace %s: %m", args->workspace ?: ".");
                o.workspace = workspace;
        }
        return mcp_serve(bus, &o);
}
