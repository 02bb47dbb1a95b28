/* SPDX-License-Identifier: MIT */
#pragma once

/* A running job's input (Stdin=pipe, Tty=true), fed through its
 * supervisor's control socket (supervisor-protocol.h). bgrund connects when
 * it first needs to, also after a restart, and then holds the input pipe's
 * write end; nothing here ever blocks on a job that does not read, nor
 * waits for its supervisor: until the supervisor has answered a new
 * connection, a call answers -EAGAIN and the runtime's notifier says
 * input_ready() once it has (or the connection failed). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

/* At most this much per WriteInput call: the pipe holds no more. */
#define JOB_INPUT_WRITE_MAX (1024 * 1024)
/* At most this much input is held for a queued job (in its record, on
 * disk), fed to its pipe once it runs. */
#define JOB_INPUT_HELD_MAX (1024 * 1024)

/* Connect to the job's supervisor's control socket (every running job's:
 * its disk budget comes that way, and then its input): 0 when connected
 * and greeted, -EAGAIN while the greeting is awaited (input_ready() tells),
 * -ENXIO when nobody listens (the job is ending). */
int job_control_connect(Job *j);

/* Write all of data to the job's input, or nothing: -ENOBUFS when the pipe
 * has no room for all of it (or, for a queued job, its held input would
 * pass JOB_INPUT_HELD_MAX; -EDQUOT: its owner's OutputMaxBytesPerUser=).
 * close ends the input after the data. -ENXIO: the job has no input, or it
 * was closed (-EPIPE: the job closed its end); -EAGAIN: its supervisor has
 * not answered yet (input_ready() follows). A queued job's input is held
 * in its record and fed to its pipe, in order, once it runs. */
int job_input_write(Job *j, const void *data, size_t size, bool close);

/* The window size of a Tty=true job's terminal. -ENOTTY: no terminal;
 * -EAGAIN as above. */
int job_input_resize(Job *j, uint16_t rows, uint16_t columns);

