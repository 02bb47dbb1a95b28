/* SPDX-License-Identifier: MIT */
/* Copying a job's output to stdout, once or until the job ends: through a
 * descriptor (OpenOutput) or in chunks (ReadOutput). */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output-layout.h"
#include "output.h"
#include "record.h"
#include "terminal-text.h"

/* How long one call blocks in bgrund while we follow output and nothing
 * comes: WaitOutput answers at once when output comes or the job ends, so
 * this is only the rate of our calls while a job is quiet. A bgrund one
 * release older (no WaitOutput) is paced by Wait, and then it is the
 * latency of the output too (issue #36, row 4: logs -f was 200 ms behind). */
#define FOLLOW_IDLE_USEC (10 * USEC_PER_SEC)
#define FOLLOW_POLL_USEC (200 * USEC_PER_MSEC)
#define READ_OUTPUT_CHUNK (64U * 1024U)

void output_source_done(OutputSource *src) {
        src->fd = safe_close(src->fd);
}

/* logs --plain: the text, without what made a terminal draw it. */
static TerminalText *plain;

void output_set_plain(bool on) {
        static TerminalText t;

        terminal_text_init(&t);
        plain = on ? &t : NULL;
}

static int write_raw(const void *p, size_t n) {
        int r = loop_write(STDOUT_FILENO, p, n);
        if (r < 0)
                return log_error_errno(r, "Failed to write output: %m");
        return 0;
}

static int write_stdout(const void *p, size_t n) {
        static char out[TERMINAL_TEXT_OUT_MAX(READ_OUTPUT_CHUNK)];
        const uint8_t *in = p;

        if (!plain)
                return write_raw(p, n);
        while (n > 0) {
                size_t k = MIN(n, (size_t) READ_OUTPUT_CHUNK);
                int r = write_raw(out, terminal_text_feed(plain, in, k, out));
                if (r < 0)
                        return r;
                in += k;
                n -= k;
        }
        return 0;
}

int output_end(void) {
        char out[TERMINAL_TEXT_LINE_MAX];

        if (!plain)
                return 0;
        return write_raw(out, terminal_text_flush(plain, out));
}

/* The line that stands for dropped bytes, the same as in the kept output
 * (output-layout.h). */
static int write_marker(uint64_t dropped) {
        char marker[OUTPUT_MARKER_MAX];
        size_t n = output_marker(dropped, marker);
        return n > 0 ? write_stdout(marker, n) : 0;
}

static bool record_truncated(json_object *rec) {
        bool b;
        return dict_get_bool(rec, &record_keys[RECORD_KEY_OUTPUT_TRUNCATED], &b) && b;
}

static bool error_means_no_fd_passing(const sd_bus_error *error, int r) {
        return sd_bus_error_has_names(error,
                                      SD_BUS_ERROR_UNKNOWN_METHOD,
                                      SD_BUS_ERROR_NOT_SUPPORTED,
                                      SD_BUS_ERROR_INCONSISTENT_MESSAGE) ||
                (!sd_bus_error_is_set(error) && (r == -EOPNOTSUPP || r == -EBADMSG));
}

static int open_output_send(sd_bus *bus, const char *id, PendingCall *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = manager_new_call(bus, "OpenOutput", &m, "s", id);
        if (r < 0)
                return r;
        return manager_call_send(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), ret);
}

/* OpenOutput's answer: 1 with a descriptor of our own, 0 where there is
 * none to be had (ReadOutput it is). */
static int open_output_finish(sd_bus *bus, PendingCall *c, const char *id, int *ret_fd) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r, bus_fd;

        r = pending_call_reply(bus, c, &error, &reply);
        if (r < 0) {
                if (error_means_no_fd_passing(&error, r))
                        return 0;
                return log_call_error("OpenOutput", id, &error, r);
        }

        r = sd_bus_message_read_basic(reply, 'h', &bus_fd);
        if (r < 0)
                return log_parse_error("OpenOutput", r);

        /* The message owns bus_fd; keep our own. */
        *ret_fd = fcntl(bus_fd, F_DUPFD_CLOEXEC, 3);
        if (*ret_fd < 0)
                return log_error_errno(errno, "Failed to duplicate output descriptor: %m");
        return 1;
}

static int open_output_fd(sd_bus *bus, const char *id, int *ret_fd) {
        _cleanup_(pending_call_done) PendingCall c = {};
        int r;

        r = open_output_send(bus, id, &c);
        if (r < 0)
                return r;
        return open_output_finish(bus, &c, id, ret_fd);
}

int output_open(sd_bus *bus, const char *id, uint64_t wait_usec, OutputSource *ret, json_object **ret_record) {
        _cleanup_(pending_call_done) PendingCall open = {}, wait = {};
        _cleanup_json_ json_object *rec = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        bool fds;
        int r;

        *ret = (OutputSource) { .id = id, .fd = -EBADF };

        /* bgrund hands a running job's output file as the job wrote it, and
         * an ended job's kept output in its final form (with the marker).
         * A record read after the call tells which this is: running then
         * means running at the call. So a Wait goes right behind OpenOutput
         * (bgrund answers it after OpenOutput; one round trip for both),
         * and is a follower's first round too. */
        fds = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD) > 0; /* else ReadOutput it is */
        if (fds) {
                r = open_output_send(bus, id, &open);
                if (r < 0)
                        return r;
        }
        if (fds || ret_record) {
                r = wait_record_send(bus, id, wait_usec, &wait);
                if (r < 0)
                        return r;
        }
        if (fds) {
                r = open_output_finish(bus, &open, id, &fd);
                if (r < 0)
                        return r;
        }
        if (fds || ret_record) {
                r = wait_record_finish(bus, &wait, id, &rec);
                if (r < 0)
                        return r;
        }

        if (fd >= 0) {
                /* An ended job may have ended after the call, and the file
                 * then be the one as written: take the final one. */
                if (record_is_running(rec))
                        ret->live = true;
                else if (record_truncated(rec)) {
                        fd = safe_close(fd);
                        r = open_output_fd(bus, id, &fd);
                        if (r < 0)
                                return r;
                }
        }

        if (fd >= 0) {
                if (fstat(fd, &st) < 0)
                        return log_error_errno(errno, "Failed to stat output descriptor: %m");
                ret->fd = TAKE_FD(fd);
                ret->regular = S_ISREG(st.st_mode);
        }
        if (ret_record)
                *ret_record = TAKE_PTR(rec);
        return 0;
}

/* Copies what the descriptor has now. For a pipe or socket, waits up to
 * wait_ms for more. Returns 1 at a definitive end (a pipe's EOF), else 0. */
static int output_pump_fd(OutputSource *src, int wait_ms) {
        uint8_t buf[64 * 1024];
        int r;

        for (;;) {
                ssize_t n;

                if (!src->regular) {
                        struct pollfd pfd = { .fd = src->fd, .events = POLLIN };

                        r = poll(&pfd, 1, wait_ms);
                        if (r < 0) {
                                if (errno == EINTR)
                                        continue;
                                return log_error_errno(errno, "Failed to poll job output: %m");
                        }
                        if (r == 0)
                                return 0;
                }

                n = read(src->fd, buf, sizeof buf);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return log_error_errno(errno, "Failed to read job output: %m");
                }
                if (n == 0)
                        return src->regular ? 0 : 1;

                r = write_stdout(buf, (size_t) n);
                if (r < 0)
                        return r;
                src->offset += (uint64_t) n;
        }
}

/* The live file grows no more once the record says truncated (the job's
 * `output` is frozen then, output-layout.h): copy what it has, and go on by
 * offset through ReadOutput, which knows where the rest is. */
static int leave_live_fd(OutputSource *src) {
        int r = output_pump_fd(src, 0);
        if (r < 0)
                return r;
        src->fd = safe_close(src->fd);
        src->live = false;
        return 0;
}

int call_read_output(sd_bus *bus, const char *id, uint64_t offset, size_t max, sd_bus_message **ret_reply,
                            const void **ret_data, size_t *ret_size, uint64_t *ret_next, int *ret_complete) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r = manager_new_call(bus, "ReadOutput", &m, "stu", id, offset, (uint32_t) max);
        if (r < 0)
                return r;
        r = manager_call(bus, m, call_timeout(CALL_TIMEOUT_DEFAULT), id, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_read_array(reply, 'y', ret_data, ret_size);
        if (r >= 0)
                r = sd_bus_message_read(reply, "tb", ret_next, ret_complete);
        if (r < 0)
                return log_parse_error("ReadOutput", r);
        *ret_reply = TAKE_PTR(reply);
        return 0;
}

/* One ReadOutput call at src->offset. What comes starts at next - size:
 * past offset when offset was dropped, and the marker says how much. With
 * stop_at_gap nothing after a gap is printed: src->skipping is set instead.
 * Returns 1 when the daemon says the output is complete, else 0; *ret_size
 * is how many bytes were printed. */
static int output_read_chunk(sd_bus *bus, OutputSource *src, bool stop_at_gap, size_t *ret_size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const void *data;
        size_t size;
        uint64_t next, start;
        int complete, r;

        *ret_size = 0;
        r = call_read_output(bus, src->id, src->offset, READ_OUTPUT_CHUNK, &reply, &data, &size, &next, &complete);
        if (r < 0)
                return r;

        /* Trust "next" only if it moves forward; else count what we got. */
        start = next >= src->offset + size ? next - size : src->offset;
        if (start > src->offset) {
                if (stop_at_gap) {
                        src->skipping = true;
                        return 0;
                }
                r = write_marker(start - src->offset);
                if (r < 0)
                        return r;
        }
        r = write_stdout(data, size);
        if (r < 0)
                return r;

        src->offset = start + size;
        *ret_size = size;
        return complete ? 1 : 0;
}

/* ReadOutput until nothing more comes now (or src->end, or a gap with
 * stop_at_gap). Returns 1 when the output is complete. */
static int output_pump_read(sd_bus *bus, OutputSource *src, bool stop_at_gap) {
        for (;;) {
                size_t size = 0;
                int r;

                if (src->end > 0 && src->offset >= src->end)
                        return 0;
                r = output_read_chunk(bus, src, stop_at_gap, &size);
                if (r != 0)
                        return r;
                if (size == 0 || src->skipping)
                        return 0;
        }
}

int output_pump(sd_bus *bus, OutputSource *src, int wait_ms) {
        _cleanup_json_ json_object *rec = NULL;
        int r;

        if (fflush(stdout) == EOF)
                return log_error_errno(errno, "Failed to write output: %m");

        if (src->fd >= 0) {
                r = output_pump_fd(src, wait_ms);
                if (r != 0 || !src->live)
                        return r;
                r = get_record(bus, src->id, &rec);
                if (r < 0)
                        return r;
                if (!record_truncated(rec))
                        return 0;
                r = leave_live_fd(src);
                if (r < 0)
                        return r;
        } else if (src->end == 0) {
                r = get_record(bus, src->id, &rec);
                if (r < 0)
                        return r;
        }

        /* A job that runs on may write faster than we read: stop at what it
         * had written when we began. */
        if (src->end == 0) {
                uint64_t u;
                src->end = rec && dict_get_uint(rec, &record_keys[RECORD_KEY_OUTPUT_BYTES], &u) && u > 0
                        ? u : UINT64_MAX;
        }
        return output_pump_read(bus, src, false);
}

/* One WaitOutput from src->offset of up to one byte (the copy is
 * output_follow_step()'s, through the descriptor or ReadOutput): 1 when the
 * job has ended and nothing lies past the offset, 0 when output lies past
 * it or the timeout passed (*ret_more says which), -EOPNOTSUPP from a bgrund
 * without WaitOutput (said nowhere: Wait paces then). */
static int wait_output(sd_bus *bus, OutputSource *src, uint64_t timeout, bool *ret_more) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const void *data;
        size_t size;
        uint64_t next;
        int complete, r;

        r = manager_new_call(bus, "WaitOutput", &m, "stut", src->id, src->offset, (uint32_t) 1, timeout);
        if (r < 0)
                return r;
        r = manager_call_raw(bus, m, call_timeout_after_wait(timeout), &error, &reply);
        if (r < 0 && sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_METHOD))
                return -EOPNOTSUPP;
        if (r < 0)
                return log_call_error("WaitOutput", src->id, &error, r);
        r = sd_bus_message_read_array(reply, 'y', &data, &size);
        if (r >= 0)
                r = sd_bus_message_read(reply, "tb", &next, &complete);
        if (r < 0)
                return log_parse_error("WaitOutput", r);
        *ret_more = size > 0;
        return complete ? 1 : 0;
}

/* Copies what there is now, as a follower: a gap while the job runs means
 * waiting for its end (the job outruns us, its tail moves on). */
static int output_follow_step(sd_bus *bus, OutputSource *src) {
        if (fflush(stdout) == EOF)
                return log_error_errno(errno, "Failed to write output: %m");
        if (src->skipping)
                return 0;
        if (src->fd >= 0)
                return output_pump_fd(src, 0);
        return output_pump_read(bus, src, true);
}

int output_follow(sd_bus *bus, OutputSource *src, FollowHooks *hooks, json_object *first, json_object **ret) {
        _cleanup_json_ json_object *next = first;
        int r;

        for (;;) {
                _cleanup_json_ json_object *rec = NULL;

                r = output_follow_step(bus, src);
                if (r < 0)
                        return r;

                if (hooks && hooks->step) {
                        r = hooks->step(bus, hooks->userdata);
                        if (r != 0) {
                                if (fflush(stdout) == EOF)
                                        return log_error_errno(errno, "Failed to write output: %m");
                                return r;
                        }
                }

                /* Blocks in the daemon until output comes or the job ends:
                 * this is our pacing. The first round's came with OpenOutput. */
                if (next)
                        rec = TAKE_PTR(next);
                else if (!src->skipping && !src->no_wait_output) {
                        uint64_t before = src->offset;
                        bool more = false;

                        r = wait_output(bus, src, hooks ? hooks->wait_usec : FOLLOW_IDLE_USEC, &more);
                        if (r == -EOPNOTSUPP) {
                                src->no_wait_output = true;
                                continue;
                        }
                        if (r < 0)
                                return r;
                        if (r == 0) {
                                if (!more)
                                        continue; /* quiet: the next round (and the hooks' step) */
                                r = output_follow_step(bus, src);
                                if (r < 0)
                                        return r;
                                /* bgrund has output past ours that our copy did not
                                 * find: the live file stopped growing (truncated),
                                 * or the job outran us. The record says which. */
                                if (src->offset != before || src->skipping)
                                        continue;
                        }
                        r = get_record(bus, src->id, &rec);
                        if (r < 0)
                                return r;
                } else {
                        r = wait_record(bus, src->id, hooks ? hooks->wait_usec : FOLLOW_POLL_USEC, &rec);
                        if (r < 0)
                                return r;
                }

                if (src->fd >= 0 && src->live && record_truncated(rec)) {
                        r = leave_live_fd(src);
                        if (r < 0)
                                return r;
                }

                if (!record_is_running(rec)) {
                        /* The job has ended; what it wrote is all there. For a pipe
                         * give the writer a moment to close its end. */
                        if (fflush(stdout) == EOF)
                                return log_error_errno(errno, "Failed to write output: %m");
                        if (src->fd >= 0)
                                r = output_pump_fd(src, 1000);
                        else {
                                src->skipping = false;
                                src->end = 0;
                                r = output_pump_read(bus, src, false);
                        }
                        if (r < 0)
                                return r;
                        if (fflush(stdout) == EOF)
                                return log_error_errno(errno, "Failed to write output: %m");
                        *ret = TAKE_PTR(rec);
                        return 0;
                }
        }
}
