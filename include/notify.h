/* SPDX-License-Identifier: MIT */
#pragma once

/* Tell the service manager about our state (READY=1 and friends) through
 * $NOTIFY_SOCKET, the protocol of sd_notify(3). Written here so that the
 * supervisor, which is started once per job, need not load libsystemd.
 * Returns 1 when sent, 0 when there is no $NOTIFY_SOCKET, or -errno. */
int notify_send(const char *state);
