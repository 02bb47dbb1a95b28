/* SPDX-License-Identifier: MIT */
#pragma once

/* The addresses a job's proxy connects to only for a host its list names
 * exactly (contract): loopback, link-local and private ones, exactly 0/8,
 * 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16, ::, ::1,
 * fc00::/7 and fe80::/10, and the IPv4 ones in their IPv4-mapped
 * (::ffff:0:0/96) and NAT64 (64:ff9b::/96) forms. Pure. */

#include <stdbool.h>
#include <sys/socket.h>

bool address_is_private(const struct sockaddr *sa);
