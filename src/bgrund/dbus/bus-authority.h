/* SPDX-License-Identifier: MIT */
#pragma once

/* Who is calling and what they may touch. The owner of a request is the
 * caller's uid as the bus vouches for it, never an argument. */

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <sys/types.h>

typedef struct BusService BusService;
typedef struct Job Job;
/* The face's callers' identities: the senders' credentials asked for and
 * remembered, and the one uid a --user instance serves. BusService owns it. */
typedef struct BusAuthority BusAuthority;

/* What it learns of each caller goes into s's registry (bus-client.h). */
int bus_authority_new(BusService *s, BusAuthority **ret);
/* Drops the queries in flight and the calls they hold. */
BusAuthority *bus_authority_free(BusAuthority *a);

/* bgrund --user: uid is the only caller served, its only owner and admin;
 * any other caller's identity is AccessDenied. */
void bus_authority_serve_only(BusAuthority *a, uid_t uid);

/* Have each method call's sender credentials asked for before its handler
 * runs, without blocking (a filter on bus). */
int bus_authority_prefetch_creds(BusAuthority *a, sd_bus *bus);
/* The caller of that name left (bus-callers.c): its identity forgotten, and
 * a call of it still queued dropped unanswered (nobody is there). */
void bus_authority_caller_gone(BusAuthority *a, const char *name);

/* The caller's effective uid from bus credentials; AccessDenied into error
 * when it cannot be established (or is not the one served). */
int bus_caller_uid(BusService *s, sd_bus_message *m, uid_t *ret, sd_bus_error *error);
/* The same, and the pid of the process that connected (0 if unknown). */
int bus_caller_creds(BusService *s, sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid, sd_bus_error *error);

/* Whether the caller may act on every job: root, or granted
 * org.bgrun.manage-any by polkit; for bgrund --user, its user. 1 or 0; -EINPROGRESS while polkit is being
 * asked: the handler then returns 1 without replying, and is called again
 * with the same message once polkit answered (see bus-polkit.h). */
int caller_is_admin(BusService *s, sd_bus_message *m, uid_t uid);

/* Resolve id to a job the caller may see; NoSuchJob for unknown, invalid or
 * foreign ids alike, so the answer never leaks that a job exists. Returns
 * -EINPROGRESS like caller_is_admin() for a foreign job. */
int bus_find_job(BusService *s, sd_bus_message *m, const char *id, Job **ret, sd_bus_error *error);

/* Read a method's leading job id argument and resolve it as bus_find_job(). */
int bus_read_job(BusService *s, sd_bus_message *m, Job **ret, sd_bus_error *error);

/* For method handlers: a pending authorization is not an error. */
#define BUS_AUTH_PENDING(r) ((r) == -EINPROGRESS)
