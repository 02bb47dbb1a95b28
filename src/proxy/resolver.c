/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "resolver.h"

int resolver_init(Resolver *r) {
        *r = (Resolver) {};
        return pipe2(r->pipe, O_CLOEXEC | O_NONBLOCK) < 0 ? negative_errno() : 0;
}

static void *resolve(void *userdata) {
        Lookup *l = userdata;
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
        l->error = getaddrinfo(l->host, l->service, &hints, &l->result);
        /* A pointer is written whole into a pipe (PIPE_BUF). The loop
         * reads it; a full pipe only waits. */
        while (write(l->answer_fd, &l, sizeof l) < 0 && (errno == EINTR || errno == EAGAIN))
                usleep(1000);
        return NULL;
}

/* Start l's thread: a small stack, detached. */
static int start(Resolver *r, Lookup *l) {
        pthread_attr_t a;
        pthread_t t;
        l->answer_fd = r->pipe[1];
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 256 * 1024);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int e = pthread_create(&t, &a, resolve, l);
        pthread_attr_destroy(&a);
        if (e != 0)
                return -e;
        r->running++;
        return 0;
}

/* Those waiting whose connection went: freed, never resolved. */
static void drop_abandoned(Resolver *r) {
        Lookup **p = &r->waiting_head, *last = NULL;
        while (*p) {
                Lookup *l = *p;
                if (l->owner) {
                        last = l;
                        p = &l->next;
                        continue;
                }
                *p = l->next;
                r->n_waiting--;
                lookup_free(l);
        }
        r->waiting_tail = last;
}

int resolver_lookup(Resolver *r, void *owner, const char *host, uint16_t port, Lookup **ret) {
        if (r->running >= RESOLVER_THREADS && r->n_waiting >= RESOLVER_WAITING_MAX) {
                drop_abandoned(r);
                if (r->n_waiting >= RESOLVER_WAITING_MAX)
                        return -EBUSY;
        }
        Lookup *l = calloc(1, sizeof(Lookup));
        if (!l)
                return -ENOMEM;
        l->owner = owner;
        snprintf(l->host, sizeof l->host, "%s", host);
        snprintf(l->service, sizeof l->service, "%u", port);
        if (r->running < RESOLVER_THREADS) {
                int e = start(r, l);
                if (e < 0) {
                        free(l);
                        return e;
                }
        } else {
                if (r->waiting_tail)
                        r->waiting_tail->next = l;
                else
                        r->waiting_head = l;
                r->waiting_tail = l;
                r->n_waiting++;
        }
        *ret = l;
        return 0;
}

Lookup *resolver_answered(Resolver *r) {
        Lookup *l;
        if (read(r->pipe[0], &l, sizeof l) != (ssize_t) sizeof l)
                return NULL;
        r->running--;
        /* Its thread is done: the next waiting one runs in its place. */
        while (r->waiting_head && r->running < RESOLVER_THREADS) {
                Lookup *next = r->waiting_head;
                r->waiting_head = next->next;
                if (!r->waiting_head)
                        r->waiting_tail = NULL;
                next->next = NULL;
                r->n_waiting--;
                if (!next->owner) {
                        lookup_free(next); /* its connection went meanwhile */
                        continue;
                }
                if (start(r, next) < 0) {
                        next->error = EAI_SYSTEM;
                        /* Answered at once, through the pipe as the others. */
                        r->running++;
                        if (write(r->pipe[1], &next, sizeof next) < 0)
                                r->running--; /* lost: its connection times out */
                }
        }
        return l;
}

void lookup_free(Lookup *l) {
        if (!l)
                return;
        if (l->result)
                freeaddrinfo(l->result);
        free(l);
}
