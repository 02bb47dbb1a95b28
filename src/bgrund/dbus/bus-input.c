/* SPDX-License-Identifier: MIT */
/* WriteInput and ResizeTty: read, validate, authorize (the job's owner or
 * an admin, as for Kill), act through job-input.c, answer. A call that
 * finds the job's supervisor not answering yet (a new connection to it) is
 * held, like a Wait, and done when it answers, in the order the calls came;
 * after BUS_INPUT_WAIT_USEC it is answered InputFull, having done nothing. */
#include "bgrun/bus-api.h"
#include "bus-authority.h"
#include "bus-input.h"
#include "bus-pending.h"
#include "bus-service.h"
#include "job-input.h"
#include "launch-options.h"

static int input_error(const Job *j, int r, sd_bus_error *error) {
        switch (r) {
        case -ENOBUFS:
                if (job_is_queued(j))
                        return sd_bus_error_setf(error, BGRUN_ERROR_INPUT_FULL,
                                                 "Job %s is queued and holds %d bytes of input at most until it starts; "
                                                 "nothing was written", j->id, JOB_INPUT_HELD_MAX);
                return sd_bus_error_setf(error, BGRUN_ERROR_INPUT_FULL,
                                         "Job %s has not read the input it has yet; nothing was written", j->id);
        case -EDQUOT:
                return sd_bus_error_setf(error, BGRUN_ERROR_LIMIT_EXCEEDED,
                                         "OutputMaxBytesPerUser= reached: the input held for queued job %s would pass it; "
                                         "nothing was written", j->id);
        case -ENXIO:
        case -EPIPE:
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_INPUT, "Job %s has no input: %s", j->id,
                                         job_is_ended(j) ? "it ended"
                                         : r == -EPIPE              ? "it closed its standard input"
                                         : j->live && j->live->spec.stdin_mode != JOB_STDIN_NULL
                                                 ? "its input was closed"
                                                 : "it was launched without Stdin=pipe or Tty=true");
        case -ENOTTY:
                return sd_bus_error_setf(error, BGRUN_ERROR_NO_INPUT, "Job %s has no terminal: it was launched without Tty=true", j->id);
        case -EAGAIN:
                return sd_bus_error_setf(error, BGRUN_ERROR_INPUT_FULL,
                                         "The supervisor of job %s did not answer in time; nothing was done", j->id);
        default:
                return sd_bus_error_set_errnof(error, r, "Cannot reach the input of job %s: %m", j->id);
        }
}

/* The call's arguments after the id, read again from the start. */
static int read_input_args(sd_bus_message *m, const void **ret_data, size_t *ret_size, int *ret_close,
                           sd_bus_error *error) {
        const char *id;
        int r = sd_bus_message_rewind(m, true);
        if (r >= 0)
                r = sd_bus_message_read_basic(m, 's', &id);
        if (r >= 0)
                r = sd_bus_message_read_array(m, 'y', ret_data, ret_size);
        if (r >= 0)
                r = sd_bus_message_read_basic(m, 'b', ret_close);
        if (r < 0)
                return r;
        if (*ret_size > JOB_INPUT_WRITE_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "WriteInput takes at most %d bytes a call, not %zu", JOB_INPUT_WRITE_MAX, *ret_size);
        return 0;
}

static int read_resize_args(sd_bus_message *m, uint16_t *ret_rows, uint16_t *ret_columns, sd_bus_error *error) {
        const char *id;
        int r = sd_bus_message_rewind(m, true);
        if (r >= 0)
                r = sd_bus_message_read_basic(m, 's', &id);
        if (r >= 0)
                r = sd_bus_message_read(m, "qq", ret_rows, ret_columns);
        if (r < 0)
                return r;
        if (*ret_rows < 1 || *ret_rows > LAUNCH_TTY_SIZE_MAX || *ret_columns < 1 || *ret_columns > LAUNCH_TTY_SIZE_MAX)
                return sd_bus_error_setf(error, BGRUN_ERROR_INVALID_ARGS,
                                         "Rows and columns must each be from 1 to %d", LAUNCH_TTY_SIZE_MAX);
        return 0;
}

/* Do what m asks of j's input: 1 done, < 0 refused (error set), -EAGAIN
 * (error not set) when the supervisor has not answered yet. */
static int input_do(Job *j, sd_bus_message *m, sd_bus_error *error) {
        bool resize = streq(sd_bus_message_get_member(m), "ResizeTty");
        int r;
        if (resize) {
                uint16_t rows, columns;
                r = read_resize_args(m, &rows, &columns, error);
                if (r >= 0)
                        r = job_input_resize(j, rows, columns);
        } else {
                const void *data;
                size_t size;
                int close;
                r = read_input_args(m, &data, &size, &close, error);
                if (r >= 0)
                        r = job_input_write(j, data, size, close);
        }
        if (r == -EAGAIN || sd_bus_error_is_set(error))
                return r;
        return r < 0 ? input_error(j, r, error) : 1;
}

static void reply(sd_bus_message *m, int r, sd_bus_error *error) {
        if (r >= 0)
                (void) sd_bus_reply_method_return(m, "");
        else if (sd_bus_error_is_set(error))
                (void) sd_bus_reply_method_error(m, error);
        else
                (void) sd_bus_reply_method_errnof(m, r, "Cannot reach the job's input: %m");
}

/* The supervisor answered (or is gone): held calls are done now, in order. */
static void answer_held(Job *j, sd_bus_message *m, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = input_do(j, m, &error);
        if (r == -EAGAIN)
                r = input_error(j, r, &error);
        reply(m, r, &error);
}

static void answer_timeout(Job *j, sd_bus_message *m, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        reply(m, input_error(j, -EAGAIN, &error), &error);
}

void bus_input_ready(BusService *s, Job *j) {
        pending_calls_answer(s, j, PENDING_INPUT, answer_held, NULL);
}

static int method_input(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        Job *j;
        int r = bus_read_job(s, m, &j, error);
        if (BUS_AUTH_PENDING(r))
                return 1;
        if (r < 0)
                return r;
        /* Bad arguments are refused now, whatever the job's state. */
        const void *data;
        size_t size;
        int close;
        uint16_t rows, columns;
        r = streq(sd_bus_message_get_member(m), "ResizeTty") ? read_resize_args(m, &rows, &columns, error)
                                                             : read_input_args(m, &data, &size, &close, error);
        if (r < 0)
                return r;
        if (job_is_starting(j))
                return input_error(j, -EAGAIN, error);
        /* Behind the calls held already, to keep their order. */
        if (!pending_calls_any(s, j, PENDING_INPUT)) {
                r = input_do(j, m, error);
                if (r != -EAGAIN)
                        return r < 0 ? r : sd_bus_reply_method_return(m, "");
        }
        r = pending_call_add_full(s, j, PENDING_INPUT, m, BUS_INPUT_WAIT_USEC, answer_timeout, error);
        return r < 0 ? r : 1;
}

int bus_method_write_input(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return method_input(m, userdata, error);
}

int bus_method_resize_tty(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return method_input(m, userdata, error);
}
