/* SPDX-License-Identifier: MIT */
/* A job's output on the bus: in chunks (ReadOutput), or as a descriptor to
 * follow without copies through the bus (OpenOutput). */
#include <sys/stat.h>

#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-output.h"
#include "bus-service.h"
#include "macro.h"

/* The most one ReadOutput answer carries. */
#define READ_OUTPUT_MAX (4U * 1024U * 1024U)

#define invalid(error, ...) sd_bus_error_setf((error), BGRUN_ERROR_INVALID_ARGS, __VA_ARGS__)

int bus_method_read_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        uint64_t offset;
        uint32_t max;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (r >= 0)
                r = sd_bus_message_read(m, "tu", &offset, &max);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        if (offset > INT64_MAX)
                return invalid(error, "offset is out of range");
        if (max > READ_OUTPUT_MAX)
                max = READ_OUTPUT_MAX;

        /* Whether the job ended is decided before reading, so "complete" is
         * never claimed for bytes written after the read. */
        bool ended = j->phase == JOB_PHASE_ENDED;
        _cleanup_close_ int fd = -EBADF;
        r = job_open_output(j, &fd);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot open the output of job %s: %m", j->id);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;

        _cleanup_free_ uint8_t *buf = malloc(max ? max : 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = max ? pread(fd, buf, max, (off_t) offset) : 0;
        if (n < 0)
                return sd_bus_error_set_errnof(error, errno, "Cannot read the output of job %s: %m", j->id);
        uint64_t next = offset + (uint64_t) n;
        bool complete = ended && next >= (uint64_t) st.st_size;

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0) r = sd_bus_message_append_array(reply, 'y', buf, (size_t) n);
        if (r >= 0) r = sd_bus_message_append(reply, "tb", next, (int) complete);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

int bus_method_open_output(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        _cleanup_close_ int fd = -EBADF;
        r = job_open_output(j, &fd);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot open the output of job %s: %m", j->id);
        return sd_bus_reply_method_return(m, "h", fd);
}
