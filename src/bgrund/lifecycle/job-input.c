/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "job-live.h"
#include "job-input.h"
#include "job-store.h"
#include "log.h"
#include "fd-passing.h"
#include "macro.h"
#include "runtime.h"
#include "supervisor-protocol.h"

/* The supervisor's first message: the input's write end, or none. Never
 * waited for: -EAGAIN while it has not come. */
static int receive_greeting(JobLive *l, int fd) {
        char c = 0;
        int input_fd = -EBADF;
        int n = fd_receive(fd, MSG_DONTWAIT, &c, &input_fd);
        if (n < 0)
                return n;
        if (n == 1 && c == CONTROL_INPUT && input_fd >= 0) {
                l->input_fd = input_fd;
                return 0;
        }
        safe_close(input_fd);
        if (n == 1 && c == CONTROL_NO_INPUT) {
                l->input_closed = true;
                return 0;
        }
        return -EBADMSG;
}

static void notify_input_ready(Job *j) {
        Runtime *rt = j->runtime;
        if (rt->notifier && rt->notifier->input_ready)
                rt->notifier->input_ready(rt->notifier_data, j);
}

static int send_request(JobLive *l, const void *buf, size_t size);
static void feed_held_input(Job *j);

/* The supervisor's word on its output's disk use: charged, answered with
 * how much the output may keep. */
static void on_disk_used(Job *j, const char *buf, size_t n) {
        uint64_t used;
        if (n != CONTROL_DISK_MESSAGE_SIZE)
                return;
        memcpy(&used, buf + 1, sizeof used);
        uint64_t limit = runtime_job_disk_used(j->runtime, j, used);
        char answer[CONTROL_DISK_MESSAGE_SIZE] = { CONTROL_DISK_LIMIT };
        memcpy(answer + 1, &limit, sizeof limit);
        int r = send_request(j->live, answer, sizeof answer);
        if (r < 0)
                log_debug_errno(r, "Job %s: cannot answer its supervisor about its disk budget: %m", j->id);
}

/* The supervisor's messages: its greeting (whoever waits for the input is
 * told it came, or that the connection failed: they find which), then its
 * disk use, and an end from outside once confirmed. */
static int on_control(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        JobLive *l = j->live;
        if (!l->control_greeted) {
                int r = receive_greeting(l, fd);
                if (r == -EAGAIN && !(revents & (EPOLLHUP | EPOLLERR)))
                        return 0;
                if (r < 0) {
                        log_debug_errno(r, "Job %s: no greeting from its supervisor's control socket: %m", j->id);
                        job_input_disconnect(l);
                        notify_input_ready(j);
                        return 0;
                }
                l->control_greeted = true;
                feed_held_input(j);
                notify_input_ready(j);
        }
        /* A few at a time: a supervisor is one job's, and waits for answers. */
        for (unsigned i = 0; i < 16 && l->control_fd >= 0; i++) {
                char buf[16];
                ssize_t n = recv(l->control_fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                if (n <= 0) {
                        /* Its loop is over (the job ends): no input, no budget. */
                        job_input_disconnect(l);
                        return 0;
                }
                if (buf[0] == CONTROL_DISK_USED)
                        on_disk_used(j, buf, (size_t) n);
                else if (buf[0] == CONTROL_TEARDOWN && n == 1)
                        job_teardown_confirmed(j);
        }
        return 0;
}

int job_control_connect(Job *j) {
        JobLive *l = j->live;
        if (l->control_fd >= 0)
                return l->control_greeted ? 0 : -EAGAIN;

        /* Non-blocking: a supervisor that does not accept (its backlog is
         * full) must not hold bgrund in connect(). */
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", l->dir_fd, SUPERVISOR_CONTROL_SOCKET);
        if (connect(fd, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(sa.sun_path) + 1)) < 0)
                /* No socket, nobody listening: the job's input is gone with
                 * its supervisor's loop (it is ending). */
                return errno == ENOENT || errno == ECONNREFUSED ? -ENXIO
                       : errno == EAGAIN                       ? -EAGAIN
                                                               : negative_errno();
        /* The job's own supervisor, the one bgrund verified. */
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return negative_errno();
        if (cred.pid != l->supervisor.pid)
                return -EPERM;
        /* It answers from its loop: on_control() tells when. */
        int r = sd_event_add_io(j->runtime->event, &l->control_source, fd, EPOLLIN, on_control, j);
        if (r < 0)
                return r;
        l->control_fd = TAKE_FD(fd);
        return -EAGAIN;
}

static int send_request(JobLive *l, const void *buf, size_t size) {
        if (send(l->control_fd, buf, size, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t) size)
                return 0;
        int r = negative_errno();
        job_input_disconnect(l);
        return r == -EPIPE || r == -ECONNRESET ? -ENXIO : r;
}

/* Room in the pipe for size more bytes, for certain: the pipe's capacity
 * is counted in pages, and the page being read and the one being filled
 * can each hold a fragment. */
static bool pipe_has_room(int fd, size_t size) {
        int capacity = fcntl(fd, F_GETPIPE_SZ);
        int queued = 0;
        if (capacity <= 0 || ioctl(fd, FIONREAD, &queued) < 0)
                return false;
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t used = ((size_t) queued + page - 1) / page + (queued > 0);
        size_t needed = (size + page - 1) / page;
        return used + needed <= (size_t) capacity / page;
}

/* --- input written while the job was queued ------------------------------ */

/* Appended to the record's input file (and its end to input.eof): on disk,
 * so that it keeps across a restart as the queue does, and charged as the
 * record is. */
static int hold_input(Job *j, const void *data, size_t size, bool close) {
        JobLive *l = j->live;
        if (l->spec.stdin_mode != JOB_STDIN_PIPE || faccessat(l->dir_fd, JOB_INPUT_EOF_FILE, F_OK, AT_SYMLINK_NOFOLLOW) >= 0)
                return -ENXIO;
        _cleanup_close_ int fd = openat(l->dir_fd, JOB_INPUT_FILE, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if ((uint64_t) st.st_size + size > JOB_INPUT_HELD_MAX)
                return -ENOBUFS;
        Runtime *rt = j->runtime;
        if (j->account && j->account->disk_bytes + size > rt->config.limits.output_max_bytes_per_user)
                return -EDQUOT;
        if (size > 0) {
                ssize_t n = write(fd, data, size);
                if (n < 0 || (size_t) n != size) {
                        int r = n < 0 ? negative_errno() : -EIO;
                        if (ftruncate(fd, st.st_size) < 0) /* all or nothing */
                                log_warning_errno(negative_errno(), "Job %s: cannot take back a part of its input: %m", j->id);
                        return r;
                }
                l->record_bytes += size;
                runtime_job_charge(rt, j, j->disk_size + size);
        }
        if (close) {
                _cleanup_close_ int eof = openat(l->dir_fd, JOB_INPUT_EOF_FILE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (eof < 0)
                        return negative_errno();
        }
        return 0;
}

static void held_input_done(Job *j) {
        JobLive *l = j->live;
        l->held_source = sd_event_source_disable_unref(l->held_source);
        free(l->held);
        l->held = NULL;
        if (l->held_eof && l->input_fd >= 0) {
                l->input_fd = safe_close(l->input_fd);
                l->input_closed = true;
                char c = CONTROL_CLOSE;
                int r = send_request(l, &c, 1);
                if (r < 0)
                        log_warning_errno(r, "Job %s: cannot tell its supervisor to close the input: %m", j->id);
        }
}

/* Write what the pipe takes now; 1 when all is written, 0 when the rest
 * waits for room, < 0 when the pipe is gone. */
static int held_input_write(JobLive *l) {
        while (l->held_done < l->held_size) {
                ssize_t n = write(l->input_fd, l->held + l->held_done, l->held_size - l->held_done);
                if (n < 0)
                        return errno == EAGAIN ? 0 : errno == EINTR ? 0 : negative_errno();
                l->held_done += (size_t) n;
        }
        return 1;
}

static int on_held_room(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Job *j = userdata;
        int r = held_input_write(j->live);
        if (r < 0)
                log_debug_errno(r, "Job %s: its input closed before what was held for it was fed: %m", j->id);
        if (r != 0) {
                held_input_done(j);
                notify_input_ready(j);
        }
        return 0;
}

/* The job, queued until now, runs and its supervisor greeted: what was
 * written to it while queued goes to its pipe first, then its end if asked.
 * Taken out of the record at once, so that a restart of bgrund meanwhile
 * never feeds it twice (it may feed less: at most once). */
static void feed_held_input(Job *j) {
        JobLive *l = j->live;
        if (!j->answered_queued || l->input_fd < 0 || l->held)
                return;
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r = read_file_at(l->dir_fd, JOB_INPUT_FILE, JOB_INPUT_HELD_MAX, &data, &size);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Job %s: the input held for it is unreadable: %m", j->id);
        l->held_eof = faccessat(l->dir_fd, JOB_INPUT_EOF_FILE, F_OK, AT_SYMLINK_NOFOLLOW) >= 0;
        (void) unlinkat(l->dir_fd, JOB_INPUT_FILE, 0);
        (void) unlinkat(l->dir_fd, JOB_INPUT_EOF_FILE, 0);
        if (r < 0 && !l->held_eof)
                return;
        l->record_bytes -= MIN(l->record_bytes, (uint64_t) size);
        /* The pipe holds 1 MiB where its user's quota allows (the
         * supervisor sized it), so this goes at once; else as it is read,
         * never blocking (the pipe is non-blocking). */
        l->held = TAKE_PTR(data);
        l->held_size = l->held ? size : 0;
        l->held_done = 0;
        if (!l->held && !(l->held = strdup("")))
                return;
        r = held_input_write(l);
        if (r == 0) {
                /* The rest as the job reads. */
                r = sd_event_add_io(j->runtime->event, &l->held_source, l->input_fd, EPOLLOUT, on_held_room, j);
                if (r >= 0)
                        return;
        }
        if (r < 0)
                log_warning_errno(r, "Job %s: cannot feed the input held for it: %m", j->id);
        held_input_done(j); /* all of it written, or never will be */
}

int job_input_write(Job *j, const void *data, size_t size, bool close) {
        JobLive *l = j->live;
        if (l && job_is_queued(j))
                return hold_input(j, data, size, close);
        if (!l || !job_is_running(j) || l->spec.stdin_mode == JOB_STDIN_NULL || l->input_closed)
                return -ENXIO;
        int r = job_control_connect(j);
        if (r < 0)
                return r;
        if (l->input_closed || l->input_fd < 0)
                return -ENXIO;
        /* Behind what was held for it while queued. */
        if (l->held)
                return -ENOBUFS;

        if (size > 0) {
                if (!pipe_has_room(l->input_fd, size))
                        return -ENOBUFS;
                ssize_t n = write(l->input_fd, data, size);
                if (n < 0)
                        return errno == EAGAIN ? -ENOBUFS : negative_errno();
                if ((size_t) n != size)
                        log_warning("Job %s: input written in part (%zd of %zu bytes)", j->id, n, size);
        }
        if (close) {
                /* Ours first, then the supervisor's: the job then reads EOF. */
                l->input_fd = safe_close(l->input_fd);
                l->input_closed = true;
                char c = CONTROL_CLOSE;
                r = send_request(l, &c, 1);
                if (r < 0)
                        log_warning_errno(r, "Job %s: cannot tell its supervisor to close the input: %m", j->id);
        }
        return 0;
}

int job_input_resize(Job *j, uint16_t rows, uint16_t columns) {
        JobLive *l = j->live;
        if (!l || !job_is_running(j) || l->spec.stdin_mode != JOB_STDIN_TTY)
                return -ENOTTY;
        int r = job_control_connect(j);
        if (r < 0)
                return r;
        char buf[1 + 2 * sizeof(uint16_t)] = { CONTROL_RESIZE };
        memcpy(buf + 1, &rows, sizeof rows);
        memcpy(buf + 1 + sizeof rows, &columns, sizeof columns);
        r = send_request(l, buf, sizeof buf);
        if (r == -ENXIO) {
                /* A connection from before the supervisor's restart of its
                 * socket cannot be; one that went stale once: try anew. */
                r = job_control_connect(j);
                if (r >= 0)
                        r = send_request(l, buf, sizeof buf);
        }
        return r;
}
