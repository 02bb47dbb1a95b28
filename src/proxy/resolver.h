/* SPDX-License-Identifier: MIT */
#pragma once

/* Host names resolved off the proxy's loop: a thread a lookup (the C
 * library's resolver blocks), at most RESOLVER_THREADS at once, the rest
 * waiting their turn; each answer comes back on a pipe the loop watches.
 * A lookup whose connection went meanwhile is answered to nobody. */

#include <netdb.h>
#include <stdint.h>

#define RESOLVER_THREADS 16
/* Lookups waiting their turn, at most: past it, those whose connection went
 * are dropped, and then a new one is refused (-EBUSY), so that a job that
 * opens and closes connections faster than names resolve costs no more. */
#define RESOLVER_WAITING_MAX 256

typedef struct Lookup {
        struct Lookup *next;         /* waiting its turn */
        void *owner;                 /* the connection it is for; NULL once that went */
        char host[256];
        char service[8];
        int answer_fd;               /* where its thread writes it when answered */
        int error;                   /* getaddrinfo's, once answered */
        struct addrinfo *result;
} Lookup;

typedef struct Resolver {
        int pipe[2];                 /* answered Lookup pointers, read end watched by the loop */
        unsigned running;
        unsigned n_waiting;
        Lookup *waiting_head, *waiting_tail;
} Resolver;

int resolver_init(Resolver *r);
/* Ask for host:port for owner; the Lookup is the caller's handle (set its
 * owner to NULL to drop the answer), freed by resolver_answered(). -EBUSY
 * with RESOLVER_WAITING_MAX waiting. */
int resolver_lookup(Resolver *r, void *owner, const char *host, uint16_t port, Lookup **ret);
/* The next answered lookup from the pipe (non-blocking), or NULL; the
 * caller takes its result and calls lookup_free(). */
Lookup *resolver_answered(Resolver *r);
void lookup_free(Lookup *l);
