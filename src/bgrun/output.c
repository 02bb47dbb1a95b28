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
#include "output.h"
#include "record.h"

/* How long one Wait call blocks while we follow output: the latency of the
 * streamed output, and the rate of our calls to the daemon. */
#define FOLLOW_POLL_USEC (200 * USEC_PER_MSEC)
#define READ_OUTPUT_CHUNK (64U * 1024U)

void output_source_done(OutputSource *src) {
        src->fd = safe_close(src->fd);
}

static int write_stdout(const void *p, size_t n) {
        int r;

        r = loop_write(STDOUT_FILENO, p, n);
        if (r < 0)
                return log_error_errno(r, "Failed to write output: %m");
        return 0;
}

static bool error_means_no_fd_passing(const sd_bus_error *error, int r) {
        return sd_bus_error_has_names(error,
                                      SD_BUS_ERROR_UNKNOWN_METHOD,
                                      SD_BUS_ERROR_NOT_SUPPORTED,
                                      SD_BUS_ERROR_INCONSISTENT_MESSAGE) ||
                (!sd_bus_error_is_set(error) && (r == -EOPNOTSUPP || r == -EBADMSG));
}

int output_open(sd_bus *bus, const char *id, OutputSource *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r, bus_fd;

        *ret = (OutputSource) { .id = id, .fd = -EBADF };

        r = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD);
        if (r <= 0)
                return 0; /* ReadOutput it is */

        r = manager_new_call(bus, "OpenOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', id);
        if (r < 0)
                return log_error_errno(r, "Failed to build OpenOutput call: %m");

        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0) {
                if (error_means_no_fd_passing(&error, r))
                        return 0;
                return log_call_error("OpenOutput", id, &error, r);
        }

        r = sd_bus_message_read_basic(reply, 'h', &bus_fd);
        if (r < 0)
                return log_parse_error("OpenOutput", r);

        /* The message owns bus_fd; keep our own. */
        fd = fcntl(bus_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return log_error_errno(errno, "Failed to duplicate output descriptor: %m");
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat output descriptor: %m");

        ret->fd = TAKE_FD(fd);
        ret->regular = S_ISREG(st.st_mode);
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
        }
}

/* One ReadOutput call. Returns 1 when the daemon says the output is complete,
 * else 0; *ret_size is how many bytes came. */
static int output_read_chunk(sd_bus *bus, OutputSource *src, size_t *ret_size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const void *data;
        size_t size;
        uint64_t next;
        int complete, r;

        r = manager_new_call(bus, "ReadOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "stu", src->id, src->offset, (uint32_t) READ_OUTPUT_CHUNK);
        if (r < 0)
                return log_error_errno(r, "Failed to build ReadOutput call: %m");

        r = manager_call(bus, m, 0, src->id, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_read_array(reply, 'y', &data, &size);
        if (r >= 0)
                r = sd_bus_message_read(reply, "tb", &next, &complete);
        if (r < 0)
                return log_parse_error("ReadOutput", r);

        r = write_stdout(data, size);
        if (r < 0)
                return r;

        /* Trust "next" only if it moves forward; else count what we got. */
        src->offset = next > src->offset ? next : src->offset + size;
        *ret_size = size;
        return complete ? 1 : 0;
}

int output_pump(sd_bus *bus, OutputSource *src, int wait_ms) {
        int r;

        if (fflush(stdout) == EOF)
                return log_error_errno(errno, "Failed to write output: %m");

        if (src->fd >= 0)
                return output_pump_fd(src, wait_ms);

        for (;;) {
                size_t size = 0;

                r = output_read_chunk(bus, src, &size);
                if (r != 0)
                        return r;
                if (size == 0)
                        return 0;
        }
}

int output_follow(sd_bus *bus, OutputSource *src, json_object **ret) {
        int r;

        for (;;) {
                _cleanup_json_ json_object *rec = NULL;

                r = output_pump(bus, src, 0);
                if (r < 0)
                        return r;

                /* Blocks in the daemon for a moment: this is our pacing. */
                r = wait_record(bus, src->id, FOLLOW_POLL_USEC, &rec);
                if (r < 0)
                        return r;

                if (!record_is_running(rec)) {
                        /* The job has ended; what it wrote is all there. For a pipe
                         * give the writer a moment to close its end. */
                        r = output_pump(bus, src, 1000);
                        if (r < 0)
                                return r;
                        *ret = TAKE_PTR(rec);
                        return 0;
                }
        }
}
