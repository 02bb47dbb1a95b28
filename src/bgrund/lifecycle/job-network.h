/* SPDX-License-Identifier: MIT */
#pragma once

/* A starting job's session network: the running members of its session it
 * may join (core/session-network.h), named in its record before its
 * supervisor starts the command. */

#include "job.h"

/* Write j's network-peers: its session's running members with its network
 * options (none: the file goes, and j makes the session's namespace). 0 or
 * -errno; a job without a session's network writes nothing. */
int job_network_prepare(Job *j);
