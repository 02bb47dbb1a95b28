/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <termios.h>

#include "input-control.h"
#include "log.h"
#include "fd-passing.h"
#include "macro.h"
#include "sandbox-plan.h"
#include "supervisor-protocol.h"

static int set_nonblock(int fd) {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

/* The socket's path through our directory descriptor: as short as any,
 * whatever the state directory's own path. */
static void control_address(int dir_fd, struct sockaddr_un *sa, socklen_t *len) {
        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", dir_fd, SUPERVISOR_CONTROL_SOCKET);
        *len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
}

static int open_terminal(InputControl *ic, const JobSpec *spec, const char **ret_step) {
        *ret_step = "open a pseudo-terminal";
        ic->master_fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (ic->master_fd < 0)
                return negative_errno();
        char name[64];
        if (grantpt(ic->master_fd) < 0 || unlockpt(ic->master_fd) < 0 || ptsname_r(ic->master_fd, name, sizeof name) != 0)
                return negative_errno();
        ic->slave_fd = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (ic->slave_fd < 0)
                return negative_errno();
        /* The job's own terminal, as a login's is (the group stays tty). */
        if (fchown(ic->slave_fd, spec->uid, (gid_t) -1) < 0)
                return negative_errno();
        struct winsize ws = { .ws_row = spec->tty_rows, .ws_col = spec->tty_columns };
        if (ioctl(ic->master_fd, TIOCSWINSZ, &ws) < 0)
                return negative_errno();
        return set_nonblock(ic->master_fd);
}

static int open_input(InputControl *ic, const JobSpec *spec, int output_fd, const char **ret_step) {
        int r;
        *ret_step = "make the input pipe";
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        ic->read_fd = p[0];
        ic->write_fd = p[1];
        /* Up to 1 MiB unread; where the user's pipe quota refuses that, the
         * default is what the job gets (bgrund asks the pipe its size). */
        if (fcntl(ic->write_fd, F_SETPIPE_SZ, SUPERVISOR_INPUT_PIPE_SIZE) < 0)
                log_debug_errno(negative_errno(), "Job %s: input pipe left at its default size: %m", spec->id);
        /* bgrund's copy shares this file description: it must never block. */
        r = set_nonblock(ic->write_fd);
        if (r < 0)
                return r;

        if (ic->mode == JOB_STDIN_TTY) {
                if (sandbox_requested(spec)) {
                        /* None of the host's terminals is in the job's /dev:
                         * its own is made there (exec-child.c). */
                        *ret_step = "make the terminal's socket pair";
                        int sp[2];
                        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                                return negative_errno();
                        ic->terminal_fd = sp[0];
                        ic->child_terminal_fd = sp[1];
                } else
                        r = open_terminal(ic, spec, ret_step);
                if (r < 0)
                        return r;
                *ret_step = "relay the terminal";
                if ((r = set_nonblock(ic->read_fd)) < 0)
                        return r;
                ic->output_fd = fcntl(output_fd, F_DUPFD_CLOEXEC, 3);
                if (ic->output_fd < 0)
                        return negative_errno();
                if ((r = set_nonblock(ic->output_fd)) < 0)
                        return r;
        }

        return 0;
}

int input_control_open(InputControl *ic, int dir_fd, const JobSpec *spec, int output_fd, const char **ret_step) {
        int r;
        ic->mode = spec->stdin_mode;
        ic->dir_fd = dir_fd;
        if (ic->mode != JOB_STDIN_NULL) {
                r = open_input(ic, spec, output_fd, ret_step);
                if (r < 0)
                        return r;
        }

        /* Only bgrund's user may connect: the socket is 0600, in the job's
         * directory, which the job's user cannot enter (unless it is
         * bgrund's own, as under bgrund --user: it holds its input anyway). */
        *ret_step = "listen on the control socket";
        ic->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (ic->listen_fd < 0)
                return negative_errno();
        (void) unlinkat(dir_fd, SUPERVISOR_CONTROL_SOCKET, 0);
        struct sockaddr_un sa;
        socklen_t len;
        control_address(dir_fd, &sa, &len);
        mode_t old = umask(0177);
        r = bind(ic->listen_fd, (struct sockaddr *) &sa, len) < 0 ? negative_errno() : 0;
        umask(old);
        if (r < 0)
                return r;
        if (listen(ic->listen_fd, 4) < 0)
                return negative_errno();
        return 0;
}

int input_control_child_stdin(const InputControl *ic) {
        return ic->mode == JOB_STDIN_TTY ? ic->slave_fd : ic->mode == JOB_STDIN_PIPE ? ic->read_fd : -EBADF;
}

int input_control_child_tty(const InputControl *ic) {
        return ic->mode == JOB_STDIN_TTY ? ic->slave_fd : -EBADF;
}

int input_control_child_terminal(const InputControl *ic) {
        return ic->child_terminal_fd;
}

int input_control_receive_terminal(InputControl *ic) {
        if (ic->terminal_fd < 0)
                return 0;
        char c;
        int r = fd_receive(ic->terminal_fd, MSG_DONTWAIT, &c, &ic->master_fd);
        ic->terminal_fd = safe_close(ic->terminal_fd);
        if (r <= 0 || ic->master_fd < 0)
                return r < 0 ? r : -EBADMSG;
        return set_nonblock(ic->master_fd);
}

void input_control_forked(InputControl *ic) {
        if (ic->mode == JOB_STDIN_PIPE)
                ic->read_fd = safe_close(ic->read_fd);
        ic->slave_fd = safe_close(ic->slave_fd);
        ic->child_terminal_fd = safe_close(ic->child_terminal_fd);
}

/* The first message on every connection: the input's write end, or word
 * that there is none any more. */
static void send_greeting(InputControl *ic) {
        int r = fd_send(ic->conn_fd, ic->write_fd >= 0 ? CONTROL_INPUT : CONTROL_NO_INPUT, ic->write_fd, MSG_DONTWAIT);
        if (r < 0) {
                log_debug_errno(r, "Cannot answer bgrund on the control socket: %m");
                ic->conn_fd = safe_close(ic->conn_fd);
        }
}

static void accept_connection(InputControl *ic) {
        int fd = accept4(ic->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return;
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid()) {
                close(fd);
                return;
        }
        /* One bgrund at a time: a new connection is a restarted one. */
        safe_close(ic->conn_fd);
        ic->conn_fd = fd;
        send_greeting(ic);
        ic->disk_report_due = ic->conn_fd >= 0;
}

void input_control_send_disk_used(InputControl *ic, uint64_t used) {
        if (ic->conn_fd < 0)
                return;
        char buf[CONTROL_DISK_MESSAGE_SIZE] = { CONTROL_DISK_USED };
        memcpy(buf + 1, &used, sizeof used);
        /* A full socket drops this one: bgrund is asked again later. */
        if (send(ic->conn_fd, buf, sizeof buf, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN)
                ic->conn_fd = safe_close(ic->conn_fd);
}

void input_control_send_teardown(InputControl *ic) {
        /* bgrund may have connected since the loop last looked. */
        if (ic->listen_fd >= 0)
                accept_connection(ic);
        if (ic->conn_fd < 0)
                return;
        char c = CONTROL_TEARDOWN;
        if (send(ic->conn_fd, &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                log_debug_errno(negative_errno(), "Cannot tell bgrund of the teardown: %m");
}

static void handle_request(InputControl *ic, const char *buf, size_t n) {
        switch (buf[0]) {
        case CONTROL_CLOSE:
                /* bgrund closed its end first: with ours gone the job reads
                 * EOF once it read the rest (a terminal gets VEOF). */
                ic->write_fd = safe_close(ic->write_fd);
                break;
        case CONTROL_RESIZE: {
                uint16_t size[2];
                if (n != 1 + sizeof size || ic->master_fd < 0)
                        break;
                memcpy(size, buf + 1, sizeof size);
                struct winsize ws = { .ws_row = size[0], .ws_col = size[1] };
                if (ioctl(ic->master_fd, TIOCSWINSZ, &ws) < 0)
                        log_debug_errno(negative_errno(), "TIOCSWINSZ failed: %m");
                break;
        }
        case CONTROL_DISK_LIMIT:
                if (n != CONTROL_DISK_MESSAGE_SIZE)
                        break;
                memcpy(&ic->disk_limit, buf + 1, sizeof ic->disk_limit);
                ic->disk_limit_new = true;
                break;
        }
}

static void read_requests(InputControl *ic) {
        for (;;) {
                char buf[16];
                ssize_t n = recv(ic->conn_fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n > 0) {
                        handle_request(ic, buf, (size_t) n);
                        continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR))
                        ic->conn_fd = safe_close(ic->conn_fd);
                return;
        }
}

/* The terminal's side: WriteInput's bytes into the master, then VEOF. */
static void relay_to_master(InputControl *ic) {
        while (ic->to_master_off < ic->to_master_len) {
                ssize_t n = write(ic->master_fd, ic->to_master + ic->to_master_off, ic->to_master_len - ic->to_master_off);
                if (n <= 0)
                        return;
                ic->to_master_off += (size_t) n;
        }
        ic->to_master_len = ic->to_master_off = 0;
        if (ic->input_eof && !ic->veof_sent) {
                struct termios t;
                char eof = tcgetattr(ic->master_fd, &t) >= 0 ? (char) t.c_cc[VEOF] : 4;
                if (write(ic->master_fd, &eof, 1) == 1)
                        ic->veof_sent = true;
        }
}

static void read_input(InputControl *ic) {
        ssize_t n = read(ic->read_fd, ic->to_master, sizeof ic->to_master);
        if (n > 0) {
                ic->to_master_len = (size_t) n;
                ic->to_master_off = 0;
        } else if (n == 0) {
                ic->input_eof = true;
                ic->read_fd = safe_close(ic->read_fd);
        }
}

/* What the terminal shows, into the output pipe. EIO: no slave is open
 * any more, and everything was read. */
static void read_master(InputControl *ic) {
        ssize_t n = read(ic->master_fd, ic->to_output, sizeof ic->to_output);
        if (n > 0) {
                ic->to_output_len = (size_t) n;
                ic->to_output_off = 0;
        } else if (n == 0 || errno == EIO)
                ic->master_hup = true;
}

static void write_output(InputControl *ic) {
        while (ic->to_output_off < ic->to_output_len) {
                ssize_t n = write(ic->output_fd, ic->to_output + ic->to_output_off, ic->to_output_len - ic->to_output_off);
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) { /* the output pipe is gone: nothing to keep */
                        ic->to_output_off = ic->to_output_len;
                        break;
                }
                ic->to_output_off += (size_t) n;
        }
        ic->to_output_len = ic->to_output_off = 0;
}

void input_control_poll(const InputControl *ic, struct pollfd p[INPUT_CONTROL_POLLS]) {
        bool tty = ic->mode == JOB_STDIN_TTY && !ic->master_hup;
        bool to_master = ic->to_master_len > 0 || (ic->input_eof && !ic->veof_sent);
        short master_events = (short) ((tty && to_master ? POLLOUT : 0) | (tty && ic->to_output_len == 0 ? POLLIN : 0));
        p[0] = (struct pollfd) { .fd = ic->listen_fd, .events = POLLIN };
        p[1] = (struct pollfd) { .fd = ic->conn_fd, .events = POLLIN };
        p[2] = (struct pollfd) { .fd = tty && !to_master ? ic->read_fd : -EBADF, .events = POLLIN };
        p[3] = (struct pollfd) { .fd = master_events ? ic->master_fd : -EBADF, .events = master_events };
        p[4] = (struct pollfd) { .fd = ic->to_output_len > 0 ? ic->output_fd : -EBADF, .events = POLLOUT };
}

void input_control_dispatch(InputControl *ic, const struct pollfd p[INPUT_CONTROL_POLLS]) {
        if (p[0].revents & POLLIN)
                accept_connection(ic);
        if (p[1].revents && ic->conn_fd >= 0)
                read_requests(ic);
        if (p[2].revents)
                read_input(ic);
        if (p[3].revents & POLLOUT)
                relay_to_master(ic);
        if (p[3].revents & (POLLIN | POLLHUP | POLLERR))
                read_master(ic);
        if (ic->to_output_len > 0)
                write_output(ic);
        if (ic->master_hup) {
                /* Input for a terminal nobody has open goes nowhere. */
                ic->to_master_len = ic->to_master_off = 0;
                if (ic->to_output_len == 0)
                        ic->output_fd = safe_close(ic->output_fd);
        }
}

bool input_control_drain_output(InputControl *ic) {
        if (ic->mode != JOB_STDIN_TTY || ic->output_fd < 0)
                return true;
        /* The job is dead: the master has what it showed last, then EIO. */
        for (;;) {
                if (ic->to_output_len == 0 && !ic->master_hup)
                        read_master(ic);
                if (ic->to_output_len == 0)
                        break; /* all read, or nothing more comes */
                write_output(ic);
                if (ic->to_output_len > 0)
                        return false; /* the output pipe is full: the caller empties it */
        }
        ic->output_fd = safe_close(ic->output_fd);
        return true;
}

void input_control_stop_listening(InputControl *ic) {
        if (ic->listen_fd >= 0 && ic->dir_fd >= 0)
                (void) unlinkat(ic->dir_fd, SUPERVISOR_CONTROL_SOCKET, 0);
        ic->listen_fd = safe_close(ic->listen_fd);
        ic->conn_fd = safe_close(ic->conn_fd);
}

void input_control_done(InputControl *ic) {
        input_control_stop_listening(ic);
        safe_close(ic->write_fd);
        safe_close(ic->read_fd);
        safe_close(ic->master_fd);
        safe_close(ic->slave_fd);
        safe_close(ic->output_fd);
        safe_close(ic->terminal_fd);
        safe_close(ic->child_terminal_fd);
        *ic = INPUT_CONTROL_NULL;
}
