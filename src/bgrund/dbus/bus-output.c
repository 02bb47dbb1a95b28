/* SPDX-License-Identifier: MIT */
/* A job's output on the bus: in chunks (ReadOutput), or as a descriptor to
 * follow without copies through the bus (OpenOutput). Both go by the
 * output's layout (output-store.h): offsets count what the job wrote, and
 * what is kept is a head and a tail with at most one gap between them. */
#include <fcntl.h>

#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-output.h"
#include "bus-pending.h"
#include "bus-service.h"
#include "job-store.h"
#include "job.h"
#include "macro.h"
#include "output-store.h"
#include "output-watch.h"
#include "runtime.h"

/* The most one ReadOutput answer carries. */
#define READ_OUTPUT_MAX (4U * 1024U * 1024U)

#define invalid(error, ...) sd_bus_error_setf((error), BGRUN_ERROR_INVALID_ARGS, __VA_ARGS__)

/* The job's directory, its own descriptor. */
static int open_job_dir(Job *j, int *ret_fd) {
        if (j->live && j->live->dir_fd >= 0) {
                int fd = fcntl(j->live->dir_fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return negative_errno();
                *ret_fd = fd;
                return 0;
        }
        return job_store_open_job(j->runtime->jobs_fd, j->id, ret_fd);
}

/* Answer call with up to max bytes of j's output from offset. */
static int reply_output(Job *j, sd_bus_message *call, uint64_t offset, uint32_t max) {
        if (max > READ_OUTPUT_MAX)
                max = READ_OUTPUT_MAX;
        /* Whether the job ended is decided before reading, so "complete" is
         * never claimed for bytes written after the read. */
        bool ended = job_is_ended(j);
        _cleanup_close_ int dir_fd = -EBADF;
        int r = open_job_dir(j, &dir_fd);
        if (r < 0)
                return sd_bus_reply_method_errnof(call, r, "Cannot open the output of job %s: %m", j->id);

        _cleanup_free_ uint8_t *buf = malloc(max ? max : 1);
        if (!buf)
                return sd_bus_reply_method_errno(call, ENOMEM, NULL);
        /* A read in the dropped middle answers with what follows it: the
         * bytes start at next - size, past offset. */
        uint64_t start = offset, total;
        size_t n = 0;
        if (max > 0)
                r = output_store_read(dir_fd, offset, buf, max, &start, &n, &total);
        else
                r = job_store_output_size(dir_fd, &total);
        if (r < 0)
                return sd_bus_reply_method_errnof(call, r, "Cannot read the output of job %s: %m", j->id);
        uint64_t next = start + n;
        bool complete = ended && next >= total;

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', buf, n);
        if (r >= 0) r = sd_bus_message_append(reply, "tb", next, (int) complete);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

/* Read call's id, offset, max (and WaitOutput's timeout); its job read already. */
static int read_arguments(sd_bus_message *call, bool wait, uint64_t *offset, uint32_t *max, uint64_t *timeout) {
        int r = wait ? sd_bus_message_read(call, "tut", offset, max, timeout) : sd_bus_message_read(call, "tu", offset, max);
        if (r < 0)
                return r;
        return *offset > INT64_MAX ? -ERANGE : 0;
}

/* The job and the arguments of a ReadOutput or WaitOutput call: 0; 1 when
 * the caller's authority is still being looked up (the call is answered
 * later); or < 0 with error set. */
static int read_output_call(BusService *s, sd_bus_message *m, bool wait, Job **ret_job, uint64_t *offset,
                            uint32_t *max, uint64_t *timeout, sd_bus_error *error) {
        int r = bus_read_job(s, m, ret_job, error);
        if (r >= 0)
                r = read_arguments(m, wait, offset, max, timeout);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r == -ERANGE)
                return invalid(error, "offset is out of range");
        return r < 0 ? r : 0;
}

int bus_method_read_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint64_t offset;
        uint32_t max;
        Job *j;
        int r = read_output_call(userdata, m, false, &j, &offset, &max, NULL, error);
        return r != 0 ? r : reply_output(j, m, offset, max);
}

/* Whether a WaitOutput of j from offset answers now: output past it, or
 * the job's end (or no output to wait on: answered with what a read says). */
static bool output_ready(Job *j, uint64_t offset) {
        if (job_is_ended(j))
                return true;
        _cleanup_close_ int dir_fd = -EBADF;
        uint64_t total;
        return open_job_dir(j, &dir_fd) < 0 || job_store_output_size(dir_fd, &total) < 0 || total > offset;
}

/* A held WaitOutput's own offset and max, from its message. */
static bool call_ready(Job *j, sd_bus_message *call, uint64_t *offset, uint32_t *max) {
        const char *id;
        uint64_t timeout;
        return sd_bus_message_rewind(call, true) < 0 || sd_bus_message_read(call, "s", &id) < 0 ||
               read_arguments(call, true, offset, max, &timeout) < 0 || output_ready(j, *offset);
}

static bool held_call_ready(Job *j, sd_bus_message *call) {
        uint64_t offset;
        uint32_t max;
        return call_ready(j, call, &offset, &max);
}

/* Answered: what a read gives now (at its timeout, maybe nothing). */
static void answer_held(Job *j, sd_bus_message *call, void *userdata) {
        uint64_t offset = 0;
        uint32_t max = 0;
        (void) call_ready(j, call, &offset, &max);
        (void) reply_output(j, call, offset, max);
}

int bus_method_wait_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        uint64_t offset, timeout;
        uint32_t max;
        Job *j;
        int r = read_output_call(s, m, true, &j, &offset, &max, &timeout, error);
        if (r != 0)
                return r;
        if (timeout == 0 || job_is_starting(j) || output_ready(j, offset))
                return reply_output(j, m, offset, max);

        /* Told of new output by the kernel (output-watch.c), armed while
         * this call waits; the job's end answers it too (bus-service.c). */
        r = output_watch_add(s->runtime, j);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r == -ENOSPC ? EUSERS : -r,
                                               "Cannot watch the output of job %s: %m", j->id);
        r = pending_call_add_full(s, j, PENDING_OUTPUT, m, timeout, answer_held, error);
        if (r < 0) {
                output_watch_remove(s->runtime, j);
                return r;
        }
        /* Output that came before the watch was armed. */
        if (output_ready(j, offset))
                pending_calls_answer_ready(s, j, PENDING_OUTPUT, held_call_ready, answer_held, NULL);
        return 1;
}

void bus_output_grew(BusService *s, Job *j) {
        pending_calls_answer_ready(s, j, PENDING_OUTPUT, held_call_ready, answer_held, NULL);
}

void bus_output_ended(BusService *s, Job *j) {
        pending_calls_answer(s, j, PENDING_OUTPUT, answer_held, NULL);
}

int bus_method_open_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;

        bool ended = job_is_ended(j);
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        r = open_job_dir(j, &dir_fd);
        OutputLayout l;
        if (r >= 0)
                r = output_store_open_kept(dir_fd, &fd, &l);
        /* No file holds the kept bytes in order while the ring is in use
         * (the job went past its cap, or was short of room, and is running
         * or could not be compacted). And while the job runs, a descriptor
         * is only ever its `output` as written, which a follower can take
         * byte for byte until the record says truncated (bgrun's output.c):
         * so not the compacted file either, in the moment between the
         * compaction and the job's end. ReadOutput serves all of these. */
        if (r == -EOPNOTSUPP || (r >= 0 && !ended && l.phase != OUTPUT_LINEAR))
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "The output of job %s went past what is kept and is not in order yet; "
                                         "ReadOutput reads it",
                                         j->id);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot open the output of job %s: %m", j->id);
        return sd_bus_reply_method_return(m, "h", fd);
}
