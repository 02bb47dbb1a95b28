/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* The supplementary groups of user (with gid first), looked up before fork so
 * that the child needs no NSS. *ret is malloc'd. */
int user_groups(const char *user, gid_t gid, gid_t **ret, int *ret_n);

/* Become uid/gid with exactly these supplementary groups and no capabilities
 * at all: effective, permitted, inheritable and ambient sets empty, bounding
 * set cleared, and no_new_privs set so nothing can regain them. Must be called
 * with CAP_SETUID/CAP_SETGID/CAP_SETPCAP, in a child about to exec; or, not
 * as root, as uid itself: then only the capabilities go (the bounding set
 * stays, and no_new_privs keeps anything from using it). System calls only:
 * safe in a child that shares its parent's memory. */
int drop_privileges(uid_t uid, gid_t gid, const gid_t *groups, int n_groups);
