/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's output, copied to stdout: through the descriptor from OpenOutput,
 * or, where fd passing does not work, in chunks through ReadOutput. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct OutputSource {
        const char *id;
        int fd;         /* -EBADF: use ReadOutput */
        bool regular;   /* a file: read() returning 0 means "nothing more yet" */
        uint64_t offset; /* ReadOutput only */
} OutputSource;

/* Sets up reading the output of job id: its descriptor, or ReadOutput where
 * fd passing does not work. */
int output_open(sd_bus *bus, const char *id, OutputSource *ret);
void output_source_done(OutputSource *src);

/* Copies all output there is now. Returns 1 at a definitive end. */
int output_pump(sd_bus *bus, OutputSource *src, int wait_ms);

/* Streams the job's output until the job has ended and every byte was
 * written; the final record goes to ret. */
int output_follow(sd_bus *bus, OutputSource *src, json_object **ret);
