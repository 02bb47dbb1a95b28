/* SPDX-License-Identifier: MIT */
/* bgrund --listen, the server: the API peer to peer, as systemd serves its
 * private bus (/run/systemd/private): the socket, its connections, and how
 * a client's bytes reach sd-bus. What a bus daemon would add for callers
 * that may be hostile to each other is listen-limits.c's; the bus daemon's
 * own methods are listen-bus-daemon.c's.
 *
 * sd-bus reads a whole message into memory whatever size its header
 * declares (up to its own 128 MiB), and accepts the file descriptors a
 * client sends with it. So sd-bus does not read the client's socket itself:
 * bgrund reads it, checks the framing as it goes (listen-framing.c: the
 * authentication lines, then each message's declared size against
 * BUS_LISTEN_MESSAGE_MAX), closes any descriptor that came along, and feeds
 * the bytes to sd-bus through a socket pair. sd-bus writes its answers to
 * the client's socket directly (descriptors included: OpenOutput). The peer
 * credentials are the client socket's, read once at accept. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bgrun/bus-api.h"
#include "bus-job.h"
#include "bus-listen.h"
#include "bus-manager.h"
#include "bus-peer.h"
#include "bus-service.h"
#include "list.h"
#include "listen-bus-daemon.h"
#include "listen-connection.h"
#include "listen-limits.h"
#include "log.h"
#include "mkdir.h"

/* A client's socket's send buffer (the kernel doubles it). */
#define LISTEN_SNDBUF_SIZE (256 * 1024)
/* How often, and how long, to look whether sd-bus has read BEGIN. */
#define HELD_RETRY_USEC 50U
#define HELD_RETRY_MAX 20000U

static ListenConnection *connection_of(BusListen *l, sd_bus *bus) {
        for (ListenConnection *c = l->connections; c; c = c->next)
                if (c->bus == bus)
                        return c;
        return NULL;
}

static int bus_listen_peer(BusListen *l, sd_bus *bus, uid_t *ret_uid, pid_t *ret_pid, const char **ret_name) {
        ListenConnection *c = bus ? connection_of(l, bus) : NULL;
        if (!c)
                return -ENXIO;
        if (ret_uid)
                *ret_uid = c->uid;
        if (ret_pid)
                *ret_pid = c->pid;
        if (ret_name)
                *ret_name = c->name;
        return 0;
}

static int on_held(sd_event_source *src, uint64_t usec, void *userdata);

/* Pass what was read on to sd-bus; while it cannot take more, read no
 * more from the client. */
static void connection_feed(ListenConnection *c) {
        while (c->buf_start < c->buf_end) {
                ssize_t k = send(c->feed, c->buf + c->buf_start, c->buf_end - c->buf_start, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                (void) sd_event_source_set_enabled(c->read_source, SD_EVENT_OFF);
                                (void) sd_event_source_set_enabled(c->feed_source, SD_EVENT_ON);
                                return;
                        }
                        return listen_connection_drop(c, "sd-bus stopped reading");
                }
                c->buf_start += (size_t) k;
        }
        if (c->framing.authenticated && !c->running) {
                /* What comes after BEGIN goes once sd-bus has read BEGIN: it
                 * reads the authentication in chunks, and would keep a
                 * message that came in the same chunk unprocessed in its
                 * buffer until the client sent more. */
                (void) sd_event_source_set_enabled(c->read_source, SD_EVENT_OFF);
                (void) sd_event_source_set_enabled(c->feed_source, SD_EVENT_OFF);
                c->held_source = sd_event_source_disable_unref(c->held_source);
                if (sd_event_add_time_relative(c->listen->event, &c->held_source, CLOCK_MONOTONIC, HELD_RETRY_USEC, 1,
                                               on_held, c) < 0)
                        return listen_connection_drop(c, "out of memory");
                return;
        }
        c->buf_start = c->buf_end = c->buf_held = 0;
        (void) sd_event_source_set_enabled(c->feed_source, SD_EVENT_OFF);
        if (!listen_limits_wait_for_reader(c))
                (void) sd_event_source_set_enabled(c->read_source, SD_EVENT_ON);
}

static int on_held(sd_event_source *src, uint64_t usec, void *userdata) {
        ListenConnection *c = userdata;
        if (sd_bus_is_ready(c->bus) <= 0 && ++c->held_retries < HELD_RETRY_MAX) {
                /* Not yet: sd-bus reads in its own turn of the loop. */
                (void) sd_event_source_set_time_relative(src, HELD_RETRY_USEC);
                (void) sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
                return 0;
        }
        c->held_source = sd_event_source_disable_unref(c->held_source);
        c->running = true;
        c->buf_end = c->buf_held;
        connection_feed(c);
        return 0;
}

/* Closes what came along; returns how many there were. */
static size_t close_received_fds(struct msghdr *mh) {
        size_t closed = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                        size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < n; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                                safe_close(fd);
                        }
                        closed += n;
                }
        return closed;
}

static int on_client_readable(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        ListenConnection *c = userdata;
        if (listen_limits_wait_for_reader(c))
                return 0;
        union {
                struct cmsghdr align;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 253)];
        } control;
        struct iovec iov = { .iov_base = c->buf, .iov_len = sizeof c->buf };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
        ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        /* No method takes a descriptor, and its message would wait for
         * ever in sd-bus for the ones closed here: the connection goes, at
         * once, rather than hang. */
        if (n >= 0 && close_received_fds(&mh) > 0) {
                log_info("Peer-to-peer connection %s of uid %u sent file descriptors, which no method takes: dropped",
                         c->name, (unsigned) c->uid);
                listen_connection_free(c);
                return 0;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                /* The client is done: sd-bus reads what it still has, then
                 * sees the end, and says Disconnected. */
                (void) shutdown(c->feed, SHUT_WR);
                (void) sd_event_source_set_enabled(c->read_source, SD_EVENT_OFF);
                return 0;
        }
        /* What comes after BEGIN waits (buf_held) until sd-bus has read it. */
        size_t pass;
        if (listen_framing_feed(&c->framing, c->buf, (size_t) n, &pass) < 0) {
                listen_connection_drop(c, listen_framing_refusal_to_string(c->framing.refusal));
                return 0;
        }
        if (c->framing.authenticated)
                listen_limits_authenticated(c);
        c->buf_start = 0;
        c->buf_end = pass;
        c->buf_held = (size_t) n;
        connection_feed(c);
        return 0;
}

static int on_feed_writable(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        connection_feed(userdata);
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        log_debug("Peer-to-peer connection %s of uid %u closed", c->name, (unsigned) c->uid);
        listen_connection_free(c);
        return 0;
}

/* What a peer may send: method calls, under no sender of their own. On a
 * direct connection nobody stamps the sender: the field is the peer's say-so,
 * and handlers read a sender as a bus client's name (another user's, whose
 * identity the bus daemon vouched for). A signal or a reply from a peer
 * answers nothing bgrund asked (a forged Disconnected would free the
 * connection under sd-bus). sd-bus's own Disconnected comes this way too,
 * once the connection is closed, and passes. */
static int peer_filter(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ListenConnection *c = userdata;
        if (sd_bus_is_open(c->bus) <= 0)
                return 0;
        if (!sd_bus_message_is_method_call(m, NULL, NULL)) {
                log_debug("Connection %s of uid %u sent a message that is no call; ignored", c->name,
                          (unsigned) c->uid);
                return 1;
        }
        if (sd_bus_message_get_sender(m)) {
                (void) sd_bus_reply_method_errorf(m, SD_BUS_ERROR_ACCESS_DENIED,
                                                  "A call on a direct connection to bgrund names no sender: "
                                                  "bgrund knows its caller from the socket");
                return 1;
        }
        return 0;
}

static int connection_setup_bus(ListenConnection *c) {
        BusListen *l = c->listen;
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        c->feed = pair[0];
        _cleanup_close_ int in = pair[1], out = fcntl(c->fd, F_DUPFD_CLOEXEC, 3);
        if (out < 0)
                return -errno;

        int r = sd_bus_new(&c->bus);
        if (r < 0)
                return r;
        r = sd_bus_set_fd(c->bus, in, out);
        if (r < 0)
                return r;
        TAKE_FD(in);
        TAKE_FD(out);
        /* Anonymous: the credentials sd-bus could see are the pair's, bgrund's
         * own; the client's are c->uid and c->pid, read at accept. */
        if ((r = sd_bus_set_server(c->bus, true, l->server_id)) < 0 ||
            (r = sd_bus_set_anonymous(c->bus, true)) < 0 ||
            (r = sd_bus_set_description(c->bus, c->name)) < 0)
                return r;
        r = listen_limits_attach(c);
        if (r >= 0 && !c->refusal)
                r = bus_service_add_objects(l->service, c->bus);
        if (r >= 0)
                r = listen_bus_daemon_attach(c);
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                        "org.freedesktop.DBus.Local", "Disconnected", on_disconnected, c);
        /* Added last, so it runs first: sd-bus prepends each filter. */
        if (r >= 0)
                r = sd_bus_add_filter(c->bus, NULL, peer_filter, c);
        if (r >= 0)
                r = sd_bus_attach_event(c->bus, l->event, 0);
        if (r >= 0)
                r = sd_bus_start(c->bus);
        /* sd-bus grows a socket's send buffer to 8 MiB (as root, past
         * wmem_max): for a client that does not read, that much more kept
         * for it than BUS_LISTEN_UNREAD_MAX says. */
        if (r >= 0 && setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &(int) { LISTEN_SNDBUF_SIZE }, sizeof(int)) < 0)
                r = -errno;
        return r;
}

static int connection_new(BusListen *l, int fd, const struct ucred *cred, const char *refusal) {
        ListenConnection *c = calloc(1, sizeof(ListenConnection));
        if (!c) {
                safe_close(fd);
                return -ENOMEM;
        }
        c->listen = l;
        c->fd = fd;
        c->feed = -EBADF;
        c->uid = cred->uid;
        c->pid = cred->pid;
        listen_framing_init(&c->framing, BUS_LISTEN_MESSAGE_MAX);
        snprintf(c->name, sizeof c->name, BUS_PEER_NAME_PREFIX "%" PRIu64, ++l->next_id);
        LIST_PREPEND(l->connections, c);
        int r = 0;
        if (refusal) {
                l->n_refusing++;
                if (!(c->refusal = strdup(refusal)))
                        r = -ENOMEM;
        } else
                l->n_connections++;

        if (r >= 0)
                r = connection_setup_bus(c);
        if (r >= 0)
                r = sd_event_add_io(l->event, &c->read_source, c->fd, EPOLLIN, on_client_readable, c);
        if (r >= 0)
                r = sd_event_add_io(l->event, &c->feed_source, c->feed, EPOLLOUT, on_feed_writable, c);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->feed_source, SD_EVENT_OFF);
        if (r < 0) {
                log_warning_errno(r, "Cannot serve a connection of uid %u: %m", (unsigned) c->uid);
                listen_connection_free(c);
                return r;
        }
        log_debug("Peer-to-peer connection %s of uid %u (pid %d)%s", c->name, (unsigned) c->uid, (int) c->pid,
                  refusal ? ", turned down" : "");
        return 0;
}

static int on_accept_resume(sd_event_source *src, uint64_t usec, void *userdata) {
        BusListen *l = userdata;
        l->accept_pause = sd_event_source_disable_unref(l->accept_pause);
        (void) sd_event_source_set_enabled(l->accept_source, SD_EVENT_ON);
        return 0;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        BusListen *l = userdata;
        _cleanup_close_ int cfd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                        return 0;
                /* Out of descriptors, say: pause rather than spin. */
                log_warning_errno(-errno, "Cannot accept a connection on %s: %m", l->path);
                (void) sd_event_source_set_enabled(l->accept_source, SD_EVENT_OFF);
                if (!l->accept_pause)
                        (void) sd_event_add_time_relative(l->event, &l->accept_pause, CLOCK_MONOTONIC, USEC_PER_SEC / 10, 0,
                                                          on_accept_resume, l);
                return 0;
        }
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof cred)
                return 0; /* nobody to answer for: close it */

        char refusal[160];
        const char *why = listen_limits_refusal(l, cred.uid, refusal, sizeof refusal);
        if (why && l->n_refusing >= BUS_LISTEN_REFUSING_MAX) {
                log_debug("Connection of uid %u closed at once: %s", (unsigned) cred.uid, why);
                return 0;
        }
        (void) connection_new(l, TAKE_FD(cfd), &cred, why);
        return 0;
}

static int listen_socket(const char *address, char **ret_path, int *ret_fd) {
        const char *path = startswith_s(address, "unix:path=") ? address + strlen("unix:path=") : NULL;
        if (!path || path[0] != '/' || strpbrk(path, ",;%"))
                return log_error_errno(-EINVAL, "--listen=%s: expected unix:path=/ABSOLUTE/PATH", address);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof sa.sun_path)
                return log_error_errno(-ENAMETOOLONG, "--listen=%s: the path is too long for a socket", address);
        strcpy(sa.sun_path, path);

        int r = mkdir_parents(path, 0755);
        if (r < 0)
                return log_error_errno(r, "Cannot make the directory of %s: %m", path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return log_error_errno(-errno, "Cannot make a socket: %m");

        /* A socket left by an earlier bgrund goes; a live one is not taken. */
        struct stat st;
        if (lstat(path, &st) >= 0) {
                if (!S_ISSOCK(st.st_mode))
                        return log_error_errno(-EEXIST, "--listen: %s exists and is not a socket", path);
                _cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (probe >= 0 && connect(probe, (struct sockaddr *) &sa, sizeof sa) >= 0)
                        return log_error_errno(-EADDRINUSE, "--listen: something already listens on %s", path);
                (void) unlink(path);
        }
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return log_error_errno(-errno, "Cannot bind %s: %m", path);
        /* Every local user may connect; authority comes from the peer's
         * credentials, as on the system bus. */
        if (chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                (void) unlink(path);
                return log_error_errno(r, "Cannot listen on %s: %m", path);
        }
        if (!(*ret_path = strdup(path))) {
                (void) unlink(path);
                return -ENOMEM;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int peer_op(void *server, sd_bus *bus, uid_t *ret_uid, pid_t *ret_pid, const char **ret_name) {
        return bus_listen_peer(server, bus, ret_uid, ret_pid, ret_name);
}

static bool may_send_op(void *server, sd_bus *bus) {
        ListenConnection *c = bus ? connection_of(server, bus) : NULL;
        return !c || listen_limits_may_send(c);
}

static void free_op(void *server) {
        bus_listen_free(server);
}

static const BusPeerServer peer_server_ops = {
        .peer = peer_op,
        .may_send = may_send_op,
        .free = free_op,
};

int bus_listen_new(BusService *s, const char *address) {
        _cleanup_(bus_listen_freep) BusListen *l = calloc(1, sizeof(BusListen));
        if (!l)
                return -ENOMEM;
        l->service = s;
        l->fd = -EBADF;
        l->event = sd_event_ref(s->runtime->event);
        int r = sd_id128_randomize(&l->server_id);
        if (r < 0)
                return r;
        r = listen_socket(address, &l->path, &l->fd);
        if (r < 0)
                return r;
        r = sd_event_add_io(l->event, &l->accept_source, l->fd, EPOLLIN, on_accept, l);
        if (r < 0)
                return log_error_errno(r, "Cannot watch %s: %m", l->path);
        /* One peer-to-peer server per bgrund: -EBUSY if there is one. */
        r = bus_peer_server_set(s, &peer_server_ops, l);
        if (r < 0)
                return r;
        log_info("Serving org.bgrun.Runtime1 peer to peer on %s", l->path);
        TAKE_PTR(l); /* the face's now: bus_service_free() frees it */
        return 0;
}

BusListen *bus_listen_free(BusListen *l) {
        if (!l)
                return NULL;
        while (l->connections)
                listen_connection_free(l->connections);
        sd_event_source_disable_unref(l->accept_source);
        sd_event_source_disable_unref(l->accept_pause);
        if (l->path)
                (void) unlink(l->path); /* no stale socket: "nobody there" at once */
        safe_close(l->fd);
        free(l->path);
        sd_event_unref(l->event);
        bus_peer_server_unset(l->service, l);
        free(l);
        return NULL;
}
