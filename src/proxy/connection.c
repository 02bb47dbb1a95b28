/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address-filter.h"
#include "connection.h"
#include "denied-report.h"
#include "macro.h"
#include "proxy.h"

Connection *connection_new(Proxy *p, int client) {
        Connection *c = calloc(1, sizeof(Connection));
        if (!c)
                return NULL;
        c->proxy = p;
        c->client = client;
        c->upstream = -EBADF;
        c->up = c->down = RELAY_NULL;
        c->state = CONNECTION_HEAD;
        c->last_active = p->now;
        return c;
}

void connection_free(Connection *c) {
        if (!c)
                return;
        if (c->lookup)
                c->lookup->owner = NULL; /* answered to nobody */
        if (c->addresses)
                freeaddrinfo(c->addresses);
        safe_close(c->client);
        safe_close(c->upstream);
        relay_done(&c->up);
        relay_done(&c->down);
        free(c);
}

/* --- buffers ------------------------------------------------------------ */

static size_t buffer_used(const Buffer *b) {
        return b->end - b->start;
}

static size_t buffer_room(Buffer *b) {
        if (b->start == b->end)
                b->start = b->end = 0;
        if (b->start > 0 && b->end == sizeof b->data) {
                memmove(b->data, b->data + b->start, b->end - b->start);
                b->end -= b->start;
                b->start = 0;
        }
        return sizeof b->data - b->end;
}

static bool buffer_has_room(const Buffer *b) {
        return buffer_used(b) < sizeof b->data;
}

static bool buffer_put(Buffer *b, const void *data, size_t n) {
        if (sizeof b->data - buffer_used(b) < n)
                return false;
        if (sizeof b->data - b->end < n) {
                memmove(b->data, b->data + b->start, buffer_used(b));
                b->end -= b->start;
                b->start = 0;
        }
        memcpy(b->data + b->end, data, n);
        b->end += n;
        return true;
}

/* Read fd into b, at most max bytes: > 0 read, 0 at EOF, -EAGAIN, -errno. */
static ssize_t fill(int fd, Buffer *b, size_t max) {
        size_t room = MIN(buffer_room(b), max);
        if (room == 0)
                return -EAGAIN;
        ssize_t n = recv(fd, b->data + b->end, room, 0);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : negative_errno();
        b->end += (size_t) n;
        return n;
}

/* Write b to fd: > 0 written, -EAGAIN, -errno. */
static ssize_t drain(int fd, Buffer *b) {
        if (buffer_used(b) == 0)
                return -EAGAIN;
        ssize_t n = send(fd, b->data + b->start, buffer_used(b), MSG_NOSIGNAL);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : negative_errno();
        b->start += (size_t) n;
        return n;
}

/* --- refusals ----------------------------------------------------------- */

/* The one answer left to give: status and a one-line body; then closed. */
_printf_(3, 4) static void refuse(Connection *c, int status, const char *format, ...) {
        static const char *const reasons[] = { [400] = "Bad Request", [403] = "Forbidden", [431] = "Request Header Fields Too Large",
                                               [501] = "Not Implemented", [502] = "Bad Gateway", [504] = "Gateway Timeout" };
        char line[512], response[768];
        va_list ap;
        va_start(ap, format);
        vsnprintf(line, sizeof line, format, ap);
        va_end(ap);
        int n = snprintf(response, sizeof response,
                         "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                         status, reasons[status], strlen(line) + 1, line);
        c->to_client.start = c->to_client.end = 0;
        (void) buffer_put(&c->to_client, response, (size_t) MIN(n, (int) sizeof response - 1));
        c->state = CONNECTION_CLOSING;
        c->upstream = safe_close(c->upstream);
}

/* --- the request -------------------------------------------------------- */

/* What of buf (n bytes, read from the client) is the request's body: its
 * length into *ret_take; false for a body that is not chunked right. */
static bool body_part(Connection *c, const char *buf, size_t n, size_t *ret_take) {
        if (c->request.chunked) {
                bool done;
                ssize_t k = chunked_feed(&c->chunked, buf, n, &done);
                if (k < 0)
                        return false;
                *ret_take = (size_t) k;
                c->body_done = done;
                return true;
        }
        *ret_take = (size_t) MIN((uint64_t) n, c->body_left);
        c->body_left -= *ret_take;
        c->body_done = c->body_left == 0;
        return true;
}

/* The request as its host takes it: origin-form, without hop-by-hop
 * fields, with "Connection: close"; and what came after the head of its
 * body. */
static bool forward_head(Connection *c, size_t end) {
        const HttpRequest *r = &c->request;
        char line[HTTP_HEAD_MAX + 64];
        int n = snprintf(line, sizeof line, "%s %.*s HTTP/1.1\r\n", r->method, (int) r->path_len, r->path);
        if (n < 0 || (size_t) n >= sizeof line || !buffer_put(&c->to_upstream, line, (size_t) n))
                return false;
        bool host = false;
        for (size_t at = r->fields; at < end - 2;) {
                const char *f = c->head + at, *eol = memchr(f, '\r', end - at), *colon = memchr(f, ':', (size_t) (eol - f));
                size_t len = (size_t) (eol - f) + 2;
                host = host || ((size_t) (colon - f) == 4 && strncasecmp(f, "host", 4) == 0);
                if (!http_field_is_hop_by_hop(f, (size_t) (colon - f)) && !buffer_put(&c->to_upstream, f, len))
                        return false;
                at += len;
        }
        if (!host) {
                n = snprintf(line, sizeof line, "Host: %s:%u\r\n", r->host, r->port);
                if (!buffer_put(&c->to_upstream, line, (size_t) n))
                        return false;
        }
        static const char close_line[] = "Connection: close\r\n\r\n";
        if (!buffer_put(&c->to_upstream, close_line, sizeof close_line - 1))
                return false;
        c->body_left = r->has_length ? r->length : 0;
        c->body_done = !r->has_length && !r->chunked;
        size_t take = 0;
        if (!c->body_done && !body_part(c, c->head + end, c->head_len - end, &take))
                return false;
        return buffer_put(&c->to_upstream, c->head + end, take);
}

static void handle_head(Connection *c, size_t end) {
        Proxy *p = c->proxy;
        const char *why;
        HttpVerdict v = http_request_parse(c->head, end, &c->request, &why);
        if (v == HTTP_REQUEST_BAD_HOST) {
                denied_report(p->report_fd, NULL);
                return refuse(c, 400, "bgrun: the request names no host that AllowedDomains can hold (%s)", why);
        }
        if (v != HTTP_REQUEST_OK)
                return refuse(c, v == HTTP_REQUEST_UNSUPPORTED ? 501 : 400, "bgrun: not a request this proxy takes: %s", why);
        const HttpRequest *r = &c->request;
        if (!domain_list_allows(p->allowed, r->host, r->port, &c->exact)) {
                denied_report(p->report_fd, r->host);
                if (r->port == 80 || r->port == 443)
                        return refuse(c, 403, "bgrun: %s is not in this job's AllowedDomains (--allow-domain %s would allow it)",
                                      r->host, r->host);
                return refuse(c, 403, "bgrun: %s:%u is not in this job's AllowedDomains (--allow-domain %s:%u would allow it)",
                              r->host, r->port, r->host, r->port);
        }
        if (r->connect) {
                /* What the client sent past its CONNECT is the tunnel's. */
                if (!buffer_put(&c->to_upstream, c->head + end, c->head_len - end))
                        return refuse(c, 400, "bgrun: too much sent before the tunnel was open");
        } else if (!forward_head(c, end))
                return refuse(c, 400, "bgrun: the request's body is not framed as its head says");
        int e = resolver_lookup(&p->resolver, c, r->host, r->port, &c->lookup);
        if (e < 0)
                return refuse(c, 502, "bgrun: cannot resolve %s now", r->host);
        c->state = CONNECTION_RESOLVING;
}

/* --- upstream ----------------------------------------------------------- */

/* Connect to the next address kept; false when none is left. */
static bool connect_next(Connection *c) {
        c->upstream = safe_close(c->upstream);
        for (struct addrinfo *a = c->next_address; a; a = a->ai_next) {
                c->next_address = a->ai_next;
                /* Only to an address it checked: loopback, link-local and
                 * private ones for a host named exactly. */
                if (!c->exact && address_is_private(a->ai_addr))
                        continue;
                int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        continue;
                if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
                        close(fd);
                        continue;
                }
                c->upstream = fd;
                c->upstream_serial++;
                c->state = CONNECTION_CONNECTING;
                c->last_active = c->proxy->now;
                return true;
        }
        return false;
}

void connection_resolved(Connection *c, Lookup *l) {
        c->lookup = NULL;
        if (l->error != 0)
                return refuse(c, 502, "bgrun: cannot resolve %s: %s", c->request.host, gai_strerror(l->error));
        c->addresses = c->next_address = TAKE_PTR(l->result);
        bool any = false;
        for (struct addrinfo *a = c->addresses; a; a = a->ai_next)
                any = any || c->exact || !address_is_private(a->ai_addr);
        if (!any) {
                denied_report(c->proxy->report_fd, c->request.host);
                return refuse(c, 403, "bgrun: %s has only loopback, link-local or private addresses, which a job reaches "
                              "only for a name AllowedDomains holds itself (not by *.)", c->request.host);
        }
        if (!connect_next(c))
                refuse(c, 502, "bgrun: cannot connect to %s", c->request.host);
}

void connection_time_out(Connection *c) {
        if (c->lookup)
                c->lookup->owner = NULL;
        c->lookup = NULL;
        refuse(c, 504, "bgrun: %s:%u did not answer in time", c->request.host, c->request.port);
}

static void connected(Connection *c) {
        /* Not yet: it is writable once the connect is done, or failed. */
        struct pollfd pfd = { .fd = c->upstream, .events = POLLOUT };
        if (poll(&pfd, 1, 0) == 0)
                return;
        int error = 0;
        socklen_t len = sizeof error;
        if (getsockopt(c->upstream, SOL_SOCKET, SO_ERROR, &error, &len) < 0)
                error = errno;
        if (error == EINPROGRESS || error == EALREADY)
                return;
        if (error != 0) {
                if (!connect_next(c))
                        refuse(c, 502, "bgrun: cannot connect to %s:%u: %s", c->request.host, c->request.port,
                               strerror(error));
                return;
        }
        if (c->request.connect) {
                static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
                (void) buffer_put(&c->to_client, ok, sizeof ok - 1);
                c->state = CONNECTION_TUNNEL;
                /* Spliced both ways; copied where a pipe cannot be had. */
                if (relay_open(&c->up) >= 0)
                        (void) relay_open(&c->down);
        } else
                c->state = CONNECTION_FORWARD;
}

/* --- moving bytes -------------------------------------------------------- */

/* The client's side of a request: its body, no byte past it. */
static ssize_t read_body(Connection *c) {
        Buffer *b = &c->to_upstream;
        size_t before = b->end;
        ssize_t n = fill(c->client, b, c->request.chunked ? SIZE_MAX : c->body_left);
        if (n <= 0)
                return n;
        size_t take;
        if (!body_part(c, b->data + before, (size_t) n, &take))
                return -EBADMSG;
        b->end = before + take; /* what follows the body is dropped */
        return n;
}

/* The client is told its connection closes after this answer (so it
 * sends its next request on a new one): "Connection: close" right after
 * the answer's status line, once that is in. */
static void mark_answer(Connection *c) {
        Buffer *b = &c->to_client;
        static const char field[] = "Connection: close\r\n";
        const char *eol = memmem(b->data + b->start, buffer_used(b), "\r\n", 2);
        if (!eol) {
                /* No status line in a buffer's worth: not HTTP; passed as it is. */
                c->answer_marked = buffer_used(b) > HTTP_HEAD_MAX;
                return;
        }
        size_t at = (size_t) (eol - b->data) + 2;
        if (sizeof b->data - b->end < sizeof field - 1)
                return; /* filled below its room (pump()): never */
        memmove(b->data + at + sizeof field - 1, b->data + at, b->end - at);
        memcpy(b->data + at, field, sizeof field - 1);
        b->end += sizeof field - 1;
        c->answer_marked = true;
        (void) relay_open(&c->down); /* the body, once the head is out; or copied */
}

/* Whether bytes go through a relay (a pipe, relay.h) rather than the
 * buffer: only once the buffer of that direction is empty, so nothing
 * passes what came before it. Client to host in a tunnel; host to client
 * in a tunnel, and after the answer's head in a request. */
static bool relays_up(const Connection *c) {
        return c->state == CONNECTION_TUNNEL && relay_is_open(&c->up) && buffer_used(&c->to_upstream) == 0;
}
static bool relays_down(const Connection *c) {
        return (c->state == CONNECTION_TUNNEL || c->answer_marked) && relay_is_open(&c->down) &&
               buffer_used(&c->to_client) == 0;
}

/* What the buffer holds, then what the relay holds, to fd: > 0 moved,
 * -EAGAIN, -errno. */
static ssize_t send_out(int fd, Buffer *b, Relay *r) {
        ssize_t n = drain(fd, b);
        if (n == -EAGAIN && buffer_used(b) == 0)
                n = relay_out(r, fd);
        return n;
}

/* One pass of reads and writes; true when something moved. */
static bool pump(Connection *c, bool *ret_done) {
        bool moved = false;
        ssize_t n;
        bool tunnel = c->state == CONNECTION_TUNNEL;
        if (!c->client_eof && (tunnel || !c->body_done)) {
                n = relays_up(c) ? relay_in(&c->up, c->client)
                    : tunnel     ? fill(c->client, &c->to_upstream, SIZE_MAX)
                                 : read_body(c);
                if (n == 0 || (n < 0 && n != -EAGAIN)) {
                        c->client_eof = true;
                        /* A request whose body was cut short is no request. */
                        if (!tunnel || n < 0)
                                return *ret_done = true, true;
                }
                moved = moved || n > 0;
        }
        if ((n = send_out(c->upstream, &c->to_upstream, &c->up)) > 0)
                moved = true;
        else if (n != -EAGAIN)
                return *ret_done = true, true;
        if (tunnel && c->client_eof && buffer_used(&c->to_upstream) == 0 && !relay_holds(&c->up))
                (void) shutdown(c->upstream, SHUT_WR);
        if (!c->upstream_eof) {
                bool mark = !tunnel && !c->answer_marked;
                if (relays_down(c))
                        n = relay_in(&c->down, c->upstream);
                else {
                        /* Room kept for the field mark_answer() puts in. */
                        size_t room = buffer_room(&c->to_client);
                        n = fill(c->upstream, &c->to_client, !mark ? SIZE_MAX : room > 32 ? room - 32 : 0);
                }
                if (n == 0 || (n < 0 && n != -EAGAIN))
                        c->upstream_eof = true;
                if (n > 0 && mark)
                        mark_answer(c);
                moved = moved || n > 0;
        }
        if ((n = send_out(c->client, &c->to_client, &c->down)) > 0)
                moved = true;
        else if (n != -EAGAIN)
                return *ret_done = true, true;
        /* The answer ended with its connection: the client's closes too. */
        if (c->upstream_eof && buffer_used(&c->to_client) == 0 && !relay_holds(&c->down)) {
                if (!tunnel || c->client_eof)
                        return *ret_done = true, true;
                (void) shutdown(c->client, SHUT_WR);
        }
        return moved;
}

/* The answer is out: the client is told no more comes, and what it still
 * sends is read and dropped until it closes (a close with unread bytes
 * would reset the connection, and the client might lose the answer), at
 * most CONNECTION_LINGER_MAX bytes. */
static bool linger(Connection *c) {
        if (!c->client_shut) {
                (void) shutdown(c->client, SHUT_WR);
                c->client_shut = true;
        }
        char drop[4096];
        for (;;) {
                ssize_t n = recv(c->client, drop, sizeof drop, 0);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return true;
                if (n <= 0 || (c->lingered += (size_t) n) > CONNECTION_LINGER_MAX)
                        return false;
        }
}

bool connection_run(Connection *c) {
        for (;;) {
                bool done = false, moved = false;
                ssize_t n;
                switch (c->state) {
                case CONNECTION_HEAD: {
                        size_t room = sizeof c->head - c->head_len;
                        n = room ? recv(c->client, c->head + c->head_len, room, 0) : -1;
                        if (room == 0)
                                return refuse(c, 431, "bgrun: the request head is over %d bytes", HTTP_HEAD_MAX), true;
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                                return false;
                        if (n < 0)
                                return true;
                        c->head_len += (size_t) n;
                        c->last_active = c->proxy->now;
                        ssize_t end = http_head_end(c->head, c->head_len);
                        if (end < 0)
                                refuse(c, 400, "bgrun: not a request this proxy takes: a bare LF");
                        else if (end > 0)
                                handle_head(c, (size_t) end);
                        continue;
                }
                case CONNECTION_RESOLVING:
                        return true;
                case CONNECTION_CONNECTING:
                        connected(c);
                        if (c->state == CONNECTION_CONNECTING)
                                return true;
                        continue;
                case CONNECTION_TUNNEL:
                case CONNECTION_FORWARD:
                        moved = pump(c, &done);
                        if (done)
                                return false;
                        if (moved)
                                c->last_active = c->proxy->now;
                        if (!moved)
                                return true;
                        continue;
                case CONNECTION_CLOSING:
                        n = drain(c->client, &c->to_client);
                        if (n > 0)
                                continue;
                        if (n != -EAGAIN)
                                return false;
                        if (buffer_used(&c->to_client) > 0)
                                return true;
                        return linger(c);
                }
        }
}

/* Reads wait for room to read into: a peer that never reads holds only
 * its own connection's buffer. */
uint32_t connection_client_events(const Connection *c) {
        uint32_t e = buffer_used(&c->to_client) > 0 || relay_holds(&c->down) ? EPOLLOUT : 0;
        bool room = relays_up(c) ? !relay_holds(&c->up) : buffer_has_room(&c->to_upstream);
        switch (c->state) {
        case CONNECTION_HEAD:
                return EPOLLIN;
        case CONNECTION_TUNNEL:
                return e | (!c->client_eof && room ? EPOLLIN : 0);
        case CONNECTION_FORWARD:
                return e | (!c->client_eof && !c->body_done && room ? EPOLLIN : 0);
        case CONNECTION_CLOSING:
                return e ? e : EPOLLIN; /* its answer, then what it still sends */
        default:
                return e;
        }
}

uint32_t connection_upstream_events(const Connection *c) {
        if (c->upstream < 0)
                return 0;
        if (c->state == CONNECTION_CONNECTING)
                return EPOLLOUT;
        if (c->state != CONNECTION_TUNNEL && c->state != CONNECTION_FORWARD)
                return 0;
        bool room = relays_down(c) ? !relay_holds(&c->down) : buffer_has_room(&c->to_client);
        return (buffer_used(&c->to_upstream) > 0 || relay_holds(&c->up) ? EPOLLOUT : 0) |
               (!c->upstream_eof && room ? EPOLLIN : 0);
}
