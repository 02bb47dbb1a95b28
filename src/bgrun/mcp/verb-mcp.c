/* SPDX-License-Identifier: MIT */
/* bgrun mcp: options to the server. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domain-list.h"
#include "log.h"
#include "macro.h"
#include "mcp-server.h"
#include "sandbox-profile.h"
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

int verb_mcp(sd_bus *bus, const Args *args) {
        McpOptions o = {
                .session = args->session,
                .keep_jobs = args->keep_jobs,
                .output_limit = args->output_limit,
                .remote = bus_target_is_remote(&args->target),
                .sandbox = args->sandbox < 0 ? SANDBOX_PROFILE_OFF : args->sandbox,
                .network = args->network,
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
        if (o.sandbox != SANDBOX_PROFILE_OFF) {
                if (!realpath(args->workspace ?: ".", workspace))
                        return log_error_errno(errno, "Cannot find the workspace %s: %m", args->workspace ?: ".");
                o.workspace = workspace;
        }
        return mcp_serve(bus, &o);
}
