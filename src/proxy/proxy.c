/* SPDX-License-Identifier: MIT */
/* The proxy's loop: accepting (at most PROXY_CONNECTIONS_MAX at once),
 * each connection's sockets watched for what it waits for now, the
 * resolver's answers, and a timer a second for idle and stuck ones. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "proxy.h"
#include "time-util.h"

/* What an epoll event names: the listener, the resolver, the timer, or a
 * connection's client (its pointer) or upstream (its pointer | 1). */
enum { TAG_LISTEN = 1, TAG_RESOLVER = 3, TAG_TIMER = 5 };

static int watch(Proxy *p, int op, int fd, uint32_t events, uint64_t tag) {
        struct epoll_event e = { .events = events, .data.u64 = tag };
        return epoll_ctl(p->epoll_fd, op, fd, &e) < 0 ? negative_errno() : 0;
}

/* The loop's view of c's sockets, brought up to date with what c waits for. */
typedef struct Watched {
        int upstream;
        unsigned upstream_serial;
        uint32_t client_events, upstream_events;
} Watched;

static void close_connection(Proxy *p, Connection *c) {
        if (c->prev)
                c->prev->next = c->next;
        else
                p->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        p->n_connections--;
        free((Watched *) c->proxy_data);
        connection_free(c);
        if (!p->accepting && p->n_connections < PROXY_CONNECTIONS_MAX &&
            watch(p, EPOLL_CTL_MOD, p->listen_fd, EPOLLIN, TAG_LISTEN) >= 0)
                p->accepting = true;
}

/* After c ran: its sockets' events as it waits now; closed when done. */
static void settle(Proxy *p, Connection *c, bool alive) {
        Watched *w = c->proxy_data;
        if (!alive)
                return close_connection(p, c);
        uint32_t ce = connection_client_events(c), ue = connection_upstream_events(c);
        if (ce != w->client_events && watch(p, EPOLL_CTL_MOD, c->client, ce, (uint64_t) (uintptr_t) c) >= 0)
                w->client_events = ce;
        if (c->upstream != w->upstream || c->upstream_serial != w->upstream_serial) {
                /* The one it watched was closed (which took it off epoll). */
                w->upstream = -EBADF;
                w->upstream_events = 0;
                w->upstream_serial = c->upstream_serial;
                if (c->upstream >= 0 && watch(p, EPOLL_CTL_ADD, c->upstream, ue, (uint64_t) (uintptr_t) c | 1) >= 0) {
                        w->upstream = c->upstream;
                        w->upstream_events = ue;
                }
        } else if (c->upstream >= 0 && ue != w->upstream_events &&
                   watch(p, EPOLL_CTL_MOD, c->upstream, ue, (uint64_t) (uintptr_t) c | 1) >= 0)
                w->upstream_events = ue;
}

static void accept_clients(Proxy *p) {
        while (p->n_connections < PROXY_CONNECTIONS_MAX) {
                int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                Connection *c = connection_new(p, fd);
                Watched *w = c ? calloc(1, sizeof(Watched)) : NULL;
                if (!w || watch(p, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t) (uintptr_t) c) < 0) {
                        free(w);
                        connection_free(c);
                        if (!c)
                                close(fd);
                        continue;
                }
                *w = (Watched) { .upstream = -EBADF, .client_events = EPOLLIN };
                c->proxy_data = w;
                c->next = p->connections;
                if (c->next)
                        c->next->prev = c;
                p->connections = c;
                p->n_connections++;
        }
        /* Full: the job's clients wait in the backlog, not in our memory. */
        if (watch(p, EPOLL_CTL_MOD, p->listen_fd, 0, TAG_LISTEN) >= 0)
                p->accepting = false;
}

static void answer_lookups(Proxy *p) {
        Lookup *l;
        while ((l = resolver_answered(&p->resolver))) {
                Connection *c = l->owner;
                if (c) {
                        connection_resolved(c, l);
                        settle(p, c, connection_run(c));
                }
                lookup_free(l);
        }
}

/* Idle ones close; one stuck in its setup is told so. */
static void sweep(Proxy *p) {
        for (Connection *c = p->connections, *next; c; c = next) {
                next = c->next;
                uint64_t idle = p->now - c->last_active;
                bool setup = c->state == CONNECTION_HEAD || c->state == CONNECTION_RESOLVING ||
                             c->state == CONNECTION_CONNECTING || c->state == CONNECTION_CLOSING;
                if (setup && idle > PROXY_SETUP_USEC) {
                        if (c->state == CONNECTION_HEAD || c->state == CONNECTION_CLOSING) {
                                close_connection(p, c);
                                continue;
                        }
                        connection_time_out(c);
                        settle(p, c, connection_run(c));
                } else if (idle > PROXY_IDLE_USEC)
                        close_connection(p, c);
        }
}

int proxy_run(Proxy *p) {
        int r = resolver_init(&p->resolver);
        if (r < 0)
                return r;
        p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        struct itimerspec second = { .it_interval.tv_sec = 1, .it_value.tv_sec = 1 };
        if (p->epoll_fd < 0 || timer < 0 || timerfd_settime(timer, 0, &second, NULL) < 0)
                return negative_errno();
        if ((r = watch(p, EPOLL_CTL_ADD, p->listen_fd, EPOLLIN, TAG_LISTEN)) < 0 ||
            (r = watch(p, EPOLL_CTL_ADD, p->resolver.pipe[0], EPOLLIN, TAG_RESOLVER)) < 0 ||
            (r = watch(p, EPOLL_CTL_ADD, timer, EPOLLIN, TAG_TIMER)) < 0)
                return r;
        p->accepting = true;
        for (;;) {
                struct epoll_event events[64];
                int n = epoll_wait(p->epoll_fd, events, ELEMENTSOF(events), -1);
                if (n < 0 && errno != EINTR)
                        return negative_errno();
                p->now = now_monotonic_usec();
                for (int i = 0; i < n; i++) {
                        uint64_t tag = events[i].data.u64;
                        if (tag == TAG_LISTEN) {
                                if (events[i].events & (EPOLLERR | EPOLLHUP))
                                        return -ENOTCONN;
                                accept_clients(p);
                        } else if (tag == TAG_RESOLVER)
                                answer_lookups(p);
                        else if (tag == TAG_TIMER) {
                                uint64_t ticks;
                                (void) !read(timer, &ticks, sizeof ticks);
                                sweep(p);
                        }
                }
                /* Connections after the rest: a closed one's later events in
                 * this batch must find nothing (it is looked up, not used). */
                for (int i = 0; i < n; i++) {
                        uint64_t tag = events[i].data.u64;
                        if (tag == TAG_LISTEN || tag == TAG_RESOLVER || tag == TAG_TIMER)
                                continue;
                        Connection *c = (Connection *) (uintptr_t) (tag & ~(uint64_t) 1);
                        bool known = false;
                        for (Connection *k = p->connections; k && !known; k = k->next)
                                known = k == c;
                        if (known)
                                settle(p, c, connection_run(c));
                }
        }
}
