/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "error-text.h"
#include "macro.h"
#include "mcp-sandbox.h"
#include "sandbox-profile.h"
#include "strv.h"

/* The server's floor, in words for the model. */
static const char *floor_words(const McpOptions *o) {
        return o->network           ? " (with the network)"
               : o->allowed_domains ? " (reaching only the names it allows, over HTTP(S))"
                                    : " (without a network)";
}

int mcp_sandbox_for_run(const McpOptions *o, const McpArgs *a, const char *cwd, JobSpec *spec, const char **ret_profile,
                        char **ret_error) {
        SandboxProfile floor = (SandboxProfile) o->sandbox;
        SandboxProfile p = mcp_args_has(a, MCP_ARG_SANDBOX) ? (SandboxProfile) a->sandbox : floor;
        if (p < floor)
                return error_text(-EPERM, ret_error,
                              "This server runs every command in the sandbox '%s'%s: a run may ask for more confinement "
                              "(\"read-only\" is more than \"workspace\"), never less; '%s' is less.",
                              sandbox_profile_to_string(floor), floor_words(o), sandbox_profile_to_string(p));
        /* The network: a floor's own, unless the call takes it away; without
         * a floor, a profile has none unless the call keeps it. */
        bool allowed = floor == SANDBOX_PROFILE_OFF || o->network;
        bool network = mcp_args_has(a, MCP_ARG_NETWORK) ? a->network
                       : floor != SANDBOX_PROFILE_OFF   ? o->network
                                                        : p == SANDBOX_PROFILE_OFF;
        if (network && !allowed)
                return error_text(-EPERM, ret_error,
                              "This server runs every command in the sandbox '%s'%s: a run may not ask for the network.",
                              sandbox_profile_to_string(floor), floor_words(o));
        if (p == SANDBOX_PROFILE_OFF && network) {
                *ret_profile = sandbox_profile_to_string(SANDBOX_PROFILE_OFF);
                return 0;
        }
        /* The workspace: the server's with a floor, whatever cwd says. */
        const char *workspace = floor != SANDBOX_PROFILE_OFF ? o->workspace : cwd;
        if (sandbox_profile_spec(p, workspace, network, spec) < 0)
                return -ENOMEM;
        /* The floor's names, for every run without the network: a call
         * cannot add one. */
        if (!network && o->allowed_domains && !(spec->allowed_domains = strv_copy(o->allowed_domains)))
                return -ENOMEM;
        /* More writable directories of a workspace floor; a read-only run
         * has none. */
        if (p == SANDBOX_PROFILE_WORKSPACE && floor == SANDBOX_PROFILE_WORKSPACE)
                for (char *const *d = o->writable; d && *d; d++) {
                        size_t n = strv_length(spec->read_write_paths);
                        if (strv_consume(&spec->read_write_paths, &n, strdup(*d)) < 0)
                                return -ENOMEM;
                }
        if (o->no_protect_git)
                spec->protect_git = false;
        *ret_profile = p == SANDBOX_PROFILE_OFF ? "custom" : sandbox_profile_to_string(p);
        return 0;
}

char *mcp_sandbox_describe(const McpOptions *o) {
        if (o->sandbox == SANDBOX_PROFILE_OFF)
                return strdup("Commands run without a sandbox, as this server's user, in its working directory unless a "
                              "call gives cwd; a call may ask for one (sandbox: workspace or read-only).");
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        if (o->sandbox == SANDBOX_PROFILE_WORKSPACE) {
                fprintf(f, "Every command runs in a sandbox: the file system is read-only but the workspace %s",
                        o->workspace);
                for (char *const *d = o->writable; d && *d; d++)
                        fprintf(f, "%s%s", d[1] ? ", " : " and ", *d);
                fputs(" (a call without cwd runs in the workspace; a relative cwd is taken from it)", f);
        } else
                fprintf(f, "Every command runs in a sandbox where nothing is writable (the workspace %s is a call's "
                        "default cwd)", o->workspace);
        fputs("; /tmp is its own, the home directory read-only, and no Unix socket outside the writable paths "
              "reaches anything. ", f);
        if (o->network)
                fputs("It has the host's network. ", f);
        else if (o->allowed_domains) {
                fputs("Its network reaches only these hosts, over HTTP and HTTPS through a proxy (HTTP_PROXY is set; "
                      "other protocols are not carried):", f);
                for (char *const *d = o->allowed_domains; *d; d++)
                        fprintf(f, "%s %s", d == o->allowed_domains ? "" : ",", *d);
                fputs("; any other host is refused with 403 and listed in the result's network_denied. ", f);
        } else
                fputs("It has no network but a loopback of its own, which this server's commands share (a server one "
                      "starts on 127.0.0.1 is reached by the next). ", f);
        if (o->no_protect_git)
                fputs("Git's files are as any other. ", f);
        else
                fputs("In a writable repository git's hooks and config are read-only (git add, commit and branch "
                      "work; changing hooks or config does not). ", f);
        fputs("A command the sandbox refused (a read-only file, a refused host) is to be reported to the user, who "
              "decides; never retried without the sandbox or with a looser one.", f);
        bool failed = ferror(f);
        if (fclose(f) != 0 || failed) {
                free(text);
                return NULL;
        }
        return text;
}

int mcp_sandbox_check_call(const McpOptions *o, const char *session, McpTool tool, const McpArgs *a, bool own_job,
                           char **ret_error) {
        if (o->sandbox == SANDBOX_PROFILE_OFF)
                return 0;
        if (tool == MCP_TOOL_LIST && a->session && !streq(a->session, session))
                return error_text(-EPERM, ret_error, "This server runs its commands in a sandbox and lists only its own jobs: "
                                         "leave session out.");
        /* Its session is the record of what it ran: a run stays in it. */
        if (tool == MCP_TOOL_RUN && a->session && !streq(a->session, session))
                return error_text(-EPERM, ret_error, "This server runs its commands in a sandbox, all in its own session '%.64s': "
                                         "leave session out.", session);
        if (a->id && !own_job)
                return error_text(-EPERM, ret_error, "Job '%.64s' was not launched by this server, which runs its commands in a "
                                         "sandbox and acts only on its own jobs.", a->id);
        return 0;
}
