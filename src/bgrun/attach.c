/* SPDX-License-Identifier: MIT */
/* run --wait: the job's output here, this input there, and an interrupt
 * that stops the job instead of leaving it behind. One loop: each round
 * copies the output there is, polls the signals (a signalfd) and the input,
 * then asks bgrund (Wait) whether the job ended. While input may come, that
 * Wait does not block and the poll is the pacing, so keys reach the job
 * at once. */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "bgrun/bus-api.h"
#include "call.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output.h"
#include "record.h"
#include "time-util.h"

/* A round while nothing but the job's end is awaited: the latency of output
 * and of an interrupt. */
#define IDLE_WAIT_USEC (200 * USEC_PER_MSEC)
/* A round while input may come. */
#define INPUT_POLL_MS 40
#define INPUT_CHUNK (64U * 1024U)
/* How long to back off while the job's input buffer is full. */
#define INPUT_FULL_RETRY_USEC (50 * USEC_PER_MSEC)
/* ^] three times within a second detaches, as with systemd-run --pty. */
#define ESCAPE_CHAR 0x1d
#define ESCAPE_USEC USEC_PER_SEC

static void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / USEC_PER_SEC),
                               .tv_nsec = (long) (usec % USEC_PER_SEC) * 1000 };
        (void) nanosleep(&ts, NULL);
}

int write_input_until(sd_bus *bus, const char *id, const void *data, size_t size, bool close_input,
                      bool log_no_input, int interrupt_fd) {
        for (;;) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                int r;

                r = manager_new_call(bus, "WriteInput", &m, "s", id);
                if (r < 0)
                        return r;
                r = sd_bus_message_append_array(m, 'y', data ?: "", size);
                if (r >= 0)
                        r = sd_bus_message_append(m, "b", close_input);
                if (r < 0)
                        return log_error_errno(r, "Failed to build WriteInput call: %m");

                r = manager_call_raw(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), &error, NULL);
                if (r >= 0)
                        return 0;
                if (sd_bus_error_has_name(&error, BGRUN_ERROR_INPUT_FULL)) {
                        /* The job has not read what it has yet: wait for it,
                         * or for an interrupt meanwhile. */
                        if (interrupt_fd >= 0) {
                                struct pollfd p = { .fd = interrupt_fd, .events = POLLIN };
                                if (poll(&p, 1, (int) (INPUT_FULL_RETRY_USEC / USEC_PER_MSEC)) > 0)
                                        return -EINTR;
                        } else
                                sleep_usec(INPUT_FULL_RETRY_USEC);
                        continue;
                }
                if (sd_bus_error_has_name(&error, BGRUN_ERROR_NO_INPUT)) {
                        if (log_no_input)
                                (void) log_call_error("WriteInput", id, &error, r);
                        return -ENOENT;
                }
                return log_call_error("WriteInput", id, &error, r);
        }
}

int write_input(sd_bus *bus, const char *id, const void *data, size_t size, bool close_input, bool log_no_input) {
        return write_input_until(bus, id, data, size, close_input, log_no_input, -EBADF);
}

int forward_input(sd_bus *bus, const char *id, int fd) {
        uint8_t buf[INPUT_CHUNK];

        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                int r;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "Failed to read standard input: %m");
                }
                r = write_input(bus, id, buf, (size_t) n, n == 0, true);
                if (r < 0)
                        return r;
                if (n == 0)
                        return 0;
        }
}

bool attach_terminal_size(unsigned short *ret_rows, unsigned short *ret_columns) {
        struct winsize ws = {};

        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
                return false;
        *ret_rows = ws.ws_row;
        *ret_columns = ws.ws_col;
        return true;
}

static void interrupt_signals(sigset_t *set, bool tty) {
        sigemptyset(set);
        sigaddset(set, SIGINT);
        sigaddset(set, SIGTERM);
        sigaddset(set, SIGHUP);
        if (tty)
                sigaddset(set, SIGWINCH);
}

int attach_block_signals(bool tty) {
        sigset_t set;

        interrupt_signals(&set, tty);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        return 0;
}

typedef struct Attach {
        const char *id;
        const AttachOptions *o;
        int signal_fd;
        int input_fd;          /* -EBADF once there is no more input to forward */
        bool raw;              /* the terminal is in raw mode: restore it */
        struct termios saved;
        int interrupted;       /* the first interrupting signal */
        bool stopped;          /* attach_stop(): the job obeyed its Stop */
        bool detached;
        uint64_t escapes[3];   /* when the last ^] came, oldest first */
        FollowHooks hooks;
} Attach;

static void attach_restore_terminal(Attach *a) {
        if (!a->raw)
                return;
        (void) tcsetattr(STDIN_FILENO, TCSADRAIN, &a->saved);
        a->raw = false;
}

static int attach_raw_terminal(Attach *a) {
        struct termios raw;

        if (!isatty(STDIN_FILENO))
                return 0;
        if (tcgetattr(STDIN_FILENO, &a->saved) < 0)
                return log_error_errno(errno, "Failed to read the terminal's settings: %m");
        raw = a->saved;
        cfmakeraw(&raw);
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
                return log_error_errno(errno, "Failed to put the terminal in raw mode: %m");
        a->raw = true;
        return 0;
}

static void attach_resize(sd_bus *bus, Attach *a) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        unsigned short rows, columns;

        if (!attach_terminal_size(&rows, &columns))
                return;
        if (manager_new_call(bus, "ResizeTty", &m, "sqq", a->id, (uint16_t) rows, (uint16_t) columns) < 0)
                return;
        /* A job that ended meanwhile has no terminal: nothing to tell. */
        (void) sd_bus_call(bus, m, 0, NULL, NULL);
}

/* 1: an interrupt came (a->interrupted says which); 0: none. */
static int attach_read_signals(sd_bus *bus, Attach *a) {
        struct signalfd_siginfo si;

        for (;;) {
                ssize_t n = read(a->signal_fd, &si, sizeof si);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return log_error_errno(errno, "Failed to read signals: %m");
                }
                if ((size_t) n != sizeof si)
                        return 0;
                if (si.ssi_signo == SIGWINCH) {
                        attach_resize(bus, a);
                        continue;
                }
                if (a->interrupted == 0)
                        a->interrupted = (int) si.ssi_signo;
                return 1;
        }
}

/* Three ^] within a second: the user wants the terminal back. */
static bool attach_escape(Attach *a, const uint8_t *buf, size_t n) {
        for (size_t i = 0; i < n; i++) {
                uint64_t now;

                if (buf[i] != ESCAPE_CHAR)
                        continue;
                now = now_monotonic_usec();
                a->escapes[0] = a->escapes[1];
                a->escapes[1] = a->escapes[2];
                a->escapes[2] = now;
                if (a->escapes[0] > 0 && now - a->escapes[0] <= ESCAPE_USEC)
                        return true;
        }
        return false;
}

static void attach_input_done(Attach *a) {
        a->input_fd = -EBADF;
        a->hooks.wait_usec = IDLE_WAIT_USEC;
}

static int attach_forward_input(sd_bus *bus, Attach *a) {
        uint8_t buf[INPUT_CHUNK];
        ssize_t n;
        int r;

        n = read(a->input_fd, buf, a->o->tty ? 4096 : sizeof buf);
        if (n < 0) {
                if (errno == EINTR || errno == EAGAIN)
                        return 0;
                log_error_errno(errno, "Failed to read standard input, no more input for the job: %m");
                attach_input_done(a);
                return 0;
        }

        if (n > 0 && a->raw && attach_escape(a, buf, (size_t) n)) {
                a->detached = true;
                return 1;
        }

        /* A signal while the job's input is full: an interrupt ends the
         * forwarding, a window size is passed on and the write tried again. */
        while ((r = write_input_until(bus, a->id, buf, (size_t) n, n == 0, false, a->signal_fd)) == -EINTR) {
                r = attach_read_signals(bus, a);
                if (r != 0)
                        return r;
        }
        if (r == -ENOENT || n == 0) {
                /* Ended, or its input closed: keep following its output. */
                attach_input_done(a);
                return 0;
        }
        return r < 0 ? r : 0;
}

static int attach_step(sd_bus *bus, void *userdata) {
        Attach *a = userdata;
        struct pollfd p[2] = {
                { .fd = a->signal_fd, .events = POLLIN },
                { .fd = a->input_fd, .events = POLLIN },
        };
        int r;

        r = poll(p, a->input_fd >= 0 ? 2 : 1, a->input_fd >= 0 ? INPUT_POLL_MS : 0);
        if (r < 0) {
                if (errno == EINTR)
                        return 0;
                return log_error_errno(errno, "Failed to poll: %m");
        }

        if (p[0].revents) {
                r = attach_read_signals(bus, a);
                if (r != 0)
                        return r;
        }
        if (a->input_fd >= 0 && p[1].revents) {
                r = attach_forward_input(bus, a);
                if (r != 0)
                        return r;
        }
        return 0;
}

typedef struct StopCall {
        bool done;
        int error;
        char *error_message;
} StopCall;

static int on_stop_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        StopCall *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        c->done = true;
        if (e) {
                c->error = sd_bus_message_get_errno(m) ?: EIO;
                c->error_message = strdup(e->message ?: e->name);
        }
        return 0;
}

static int kill_now(sd_bus *bus, const char *id) {
        _cleanup_json_ json_object *result = NULL;

        log_error("Killing job %s at once.", id);
        return call_id_dict(bus, "Kill", id, NULL, call_timeout(CALL_TIMEOUT_TEARDOWN), &result);
}

/* The interrupt's answer: Stop, gracefully; a second interrupt while it
 * runs kills at once. */
static int attach_stop(sd_bus *bus, Attach *a) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        StopCall call = {};
        int r;

        log_error("Interrupted (%s): stopping job %s gracefully; interrupt again to kill it at once.",
                  sigabbrev_np(a->interrupted) ?: "signal", a->id);

        r = manager_new_call(bus, "Stop", &m, "sa{sv}", a->id, 0);
        if (r < 0)
                return r;
        r = sd_bus_call_async(bus, &slot, m, on_stop_reply, &call, call_timeout(CALL_TIMEOUT_STOP));
        if (r < 0)
                return log_error_errno(r, "Failed to send Stop: %m");

        while (!call.done) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return log_error_errno(r, "Failed to process the bus: %m");
                if (r > 0)
                        continue;

                r = attach_read_signals(bus, a);
                if (r < 0)
                        return r;
                if (r > 0)
                        return kill_now(bus, a->id);

                r = sd_bus_wait(bus, 100 * USEC_PER_MSEC);
                if (r < 0 && r != -EINTR)
                        return log_error_errno(r, "Failed to wait for the bus: %m");
        }

        if (call.error) {
                _cleanup_free_ char *msg = call.error_message;

                log_error("Stop of job %s failed: %s", a->id, msg ?: strerror(call.error));
                return kill_now(bus, a->id);
        }
        /* Said by the caller once the job's output is all out. */
        a->stopped = true;
        return 0;
}

/* Without output (--json): only the end, the input and the signals. */
static int attach_wait(sd_bus *bus, Attach *a, json_object **ret) {
        for (;;) {
                _cleanup_json_ json_object *rec = NULL;
                int r = attach_step(bus, a);

                if (r != 0)
                        return r;
                r = wait_record(bus, a->id, a->hooks.wait_usec, &rec);
                if (r < 0)
                        return r;
                if (!record_is_running(rec)) {
                        *ret = TAKE_PTR(rec);
                        return 0;
                }
        }
}

static void attach_done(Attach *a) {
        attach_restore_terminal(a);
        a->signal_fd = safe_close(a->signal_fd);
}

int attach_job(sd_bus *bus, const char *id, const AttachOptions *o, json_object **ret_record) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        _cleanup_(attach_done) Attach a = {
                .id = id,
                .o = o,
                .signal_fd = -EBADF,
                .input_fd = o->input ? STDIN_FILENO : -EBADF,
                .hooks = { .wait_usec = o->input ? 0 : IDLE_WAIT_USEC, .step = attach_step },
        };
        _cleanup_json_ json_object *rec = NULL;
        sigset_t set;
        int r;

        a.hooks.userdata = &a;

        /* attach_block_signals() blocked them before the launch. */
        interrupt_signals(&set, o->tty);
        a.signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (a.signal_fd < 0)
                return log_error_errno(errno, "Failed to watch signals: %m");

        if (o->tty) {
                r = attach_raw_terminal(&a);
                if (r < 0)
                        return r;
        }

        if (o->output) {
                _cleanup_json_ json_object *first = NULL;

                r = output_open(bus, id, a.hooks.wait_usec, &src, &first);
                if (r >= 0 && o->from_end)
                        r = output_seek_tail(bus, &src, 0);
                if (r < 0)
                        return r;
                r = output_follow(bus, &src, &a.hooks, TAKE_PTR(first), &rec);
        } else
                r = attach_wait(bus, &a, &rec);
        attach_restore_terminal(&a);
        if (r < 0)
                return r;

        if (a.detached) {
                log_error("Detached from job %s; it runs on: bgrun attach %s to come back (bgrun logs -f %s, "
                          "bgrun send %s TEXT).", id, id, id, id);
                return 0;
        }

        if (a.interrupted) {
                r = attach_stop(bus, &a);
                if (r < 0)
                        return r;
                /* What the job wrote while it stopped (a trap's last words),
                 * to its end, before the line that says it stopped: followed
                 * until the record says the job ended and its output is all
                 * there. */
                if (o->output) {
                        _cleanup_json_ json_object *end = NULL;

                        (void) output_follow(bus, &src, NULL, NULL, &end);
                }
                if (a.stopped)
                        log_error("Job %s stopped.", id);
                return 128 + a.interrupted;
        }

        r = record_exit_status(rec);
        if (ret_record)
                *ret_record = TAKE_PTR(rec);
        return r;
}
