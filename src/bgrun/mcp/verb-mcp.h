/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun mcp: the verb, between the command line and the server. mcp/
 * includes the CLI's folder, never the other way round: bgrun's main.c
 * hands verb_mcp to the verb table (verb_table_provide). */

#include <systemd/sd-bus.h>

#include "cmdline.h"

/* Before connecting: MCP clients start servers with a minimal environment
 * (no XDG_RUNTIME_DIR, no DBUS_SESSION_BUS_ADDRESS), so --user finds the
 * user's bus where a login puts it, /run/user/UID/bus. */
void verb_mcp_prepare(const Args *args);

int verb_mcp(sd_bus *bus, const Args *args);
