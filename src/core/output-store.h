/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's output files, as output-layout.h lays them out, in the job's
 * directory:
 *   output        LINEAR: all of it; RING: the head and what was written
 *                 before the ring; COMPACTED: head + marker + tail
 *   output.state  the layout (output_state_encode()), absent or empty while
 *                 LINEAR; the supervisor pwrite()s it, bgrund reads it
 *   output.tail   RING: the ring
 *   output.new    COMPACTED: the compacted file on its way to `output`
 * One writer, the supervisor; readers never lock. A reader reads the state,
 * then the bytes, then the state again, and keeps only bytes the second
 * state still holds: the supervisor publishes the tail's new start before it
 * overwrites a byte of the ring, and never writes `output` again once it
 * froze (it only shortens it to the head). */

#include <stddef.h>
#include <stdint.h>

#include "output-layout.h"

#define JOB_OUTPUT_STATE_FILE "output.state"
#define JOB_OUTPUT_TAIL_FILE "output.tail"
#define JOB_OUTPUT_NEW_FILE "output.new"

/* The state in state_fd: 0, -ENODATA while empty (LINEAR), -EBADMSG if it
 * stays torn or inconsistent. */
int output_state_load(int state_fd, OutputLayout *ret, uint64_t *ret_output_ino);
int output_state_store(int state_fd, const OutputLayout *l, uint64_t output_ino);

/* The job's layout now: its state, or LINEAR with total the size of
 * `output` (no state file: a job under its cap, or a record from before
 * there were layouts). */
int output_store_layout(int dir_fd, OutputLayout *ret);

/* Up to max kept bytes at logical offset into buf, as ReadOutput returns
 * them: buf[0] is at logical *ret_start (offset, or past it when offset is
 * in the dropped middle or was overrun by the ring meanwhile), *ret_n bytes
 * of it; *ret_total is what the job had written by then. */
int output_store_read(int dir_fd, uint64_t offset, void *buf, size_t max, uint64_t *ret_start, size_t *ret_n,
                      uint64_t *ret_total);

/* A read-only descriptor whose bytes are the kept output in order, marker
 * included, with the layout it is of (LINEAR or COMPACTED): `output` as it
 * is. -EOPNOTSUPP while RING: no file holds the kept bytes in order then. */
int output_store_open_kept(int dir_fd, int *ret_fd, OutputLayout *ret_layout);

/* The room the output takes on disk now (`output` and the ring). */
int output_store_disk_size(int dir_fd, uint64_t *ret);

/* Give the output's room back now, before its files are removed: a
 * descriptor that OpenOutput handed out would keep them on disk, past
 * every limit that counts them, for as long as its holder likes. Such a
 * descriptor reads nothing more. */
void output_store_release(int dir_fd);
