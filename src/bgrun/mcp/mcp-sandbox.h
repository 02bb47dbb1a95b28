/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun mcp --sandbox PROFILE [--network] [--workspace DIR]: the floor of
 * every run. A call's sandbox and network may ask for more confinement,
 * never less; the writable workspace is the server's, fixed when it
 * started, whatever cwd a call gives; and the tools act only on the jobs
 * this server launched. Without a floor a call's sandbox is its own, its
 * workspace the call's cwd. Pure: no bus. */

#include "job-record.h"
#include "mcp-args.h"
#include "mcp-schema.h"
#include "mcp-server.h"

/* The sandbox options of a run with arguments a in cwd (absolute), set in
 * *spec (launch_options_free_fields() it), and the profile's name in
 * *ret_profile. -EPERM with a message for the model in *ret_error
 * (malloc'd) for a looser one than the server's; -ENOMEM. */
int mcp_sandbox_for_run(const McpOptions *o, const McpArgs *a, const char *cwd, JobSpec *spec, const char **ret_profile,
                        char **ret_error);

/* The sandbox as it is, in words for the model (malloc'd): what is
 * writable, the network (none but the session's loopback, the names its
 * proxy lets through, or the host's), git's rule, and that a refusal is for
 * its user to decide, never to be retried looser. The server's
 * instructions and the run tool's description carry it. NULL on -ENOMEM. */
char *mcp_sandbox_describe(const McpOptions *o);

/* Whether a call of tool with arguments a may act on what it names (own_job:
 * a->id is a job this server launched): with a floor, only this server's
 * jobs and its own session. -EPERM with a message in *ret_error
 * (malloc'd), -ENOMEM, or 0. */
int mcp_sandbox_check_call(const McpOptions *o, const char *session, McpTool tool, const McpArgs *a, bool own_job,
                           char **ret_error);
