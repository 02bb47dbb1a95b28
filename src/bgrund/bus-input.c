/* SPDX-License-Identifier: MIT */
/* WriteInput and ResizeTty: read, validate, authorize (the job's owner or
 * an admin, as for Kill), act through job-input.c, answer. */
#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-input.h"
#include "job-input.h"
#include "launch-options.h"

static int input_error(const Job *j, int r, sd_bus_error *error) {
        switch (r) {
        case -ENOBUFS:
                return sd_bus_error_setf(error, BGRUN_ERROR_INPUT_FULL,
                                         "Job %s has not read the input it has yet; nothing was written", j->id);
        case -ENXIO:
        case -EPIPE:
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_INPUT, "Job %s has no input: %s", j->id,
                                         j->phase == JOB_PHASE_ENDED ? "it ended"
                                         : r == -EPIPE              ? "it closed its standard input"
                                         : j->live && j->live->spec.stdin_mode != JOB_STDIN_NULL
                                                 ? "its input was closed"
                                                 : "it was launched without Stdin=pipe or Tty=true");
        case -ENOTTY:
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_INPUT, "Job %s has no terminal: it was launched without Tty=true", j->id);
        case -EAGAIN:
                return sd_bus_error_setf(error, SD_BUS_ERROR_TIMEOUT, "The supervisor of job %s did not answer in time", j->id);
        default:
                return sd_bus_error_set_errnof(error, r, "Cannot reach the input of job %s: %m", j->id);
        }
}

int bus_method_write_input(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        const void *data;
        size_t size;
        int close;
        r = sd_bus_message_read_array(m, 'y', &data, &size);
        if (r >= 0)
                r = sd_bus_message_read(m, "b", &close);
        if (r < 0)
                return r;
        if (size > JOB_INPUT_WRITE_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "WriteInput takes at most %d bytes a call, not %zu", JOB_INPUT_WRITE_MAX, size);
        if (j->phase == JOB_PHASE_STARTING)
                return input_error(j, -EAGAIN, error);
        r = job_input_write(j, data, size, close);
        if (r < 0)
                return input_error(j, r, error);
        return sd_bus_reply_method_return(m, "");
}

int bus_method_resize_tty(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        uint16_t rows, columns;
        r = sd_bus_message_read(m, "qq", &rows, &columns);
        if (r < 0)
                return r;
        if (rows < 1 || rows > LAUNCH_TTY_SIZE_MAX || columns < 1 || columns > LAUNCH_TTY_SIZE_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "Rows and columns must each be from 1 to %d", LAUNCH_TTY_SIZE_MAX);
        if (j->phase == JOB_PHASE_STARTING)
                return input_error(j, -EAGAIN, error);
        r = job_input_resize(j, rows, columns);
        if (r < 0)
                return input_error(j, r, error);
        return sd_bus_reply_method_return(m, "");
}
