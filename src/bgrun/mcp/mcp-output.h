/* SPDX-License-Identifier: MIT */
#pragma once

/* A job's output as a model gets it in a result: valid UTF-8 (bytes that are
 * not are replaced by U+FFFD), at most a limit of bytes; past it, the first
 * and the last parts with one marker line between them that says how many
 * bytes were left out and which offset to read them from with `output`.
 * Pure: the reads from bgrund are the caller's. */

#include <stddef.h>
#include <stdint.h>

#define MCP_OUTPUT_LIMIT_DEFAULT (16U * 1024U)
#define MCP_OUTPUT_LIMIT_MIN 1024U
/* Room the marker line takes, at most. */
#define MCP_OUTPUT_MARKER_MAX 160U

/* What the caller read: the head at head_offset, and, where the output was
 * longer than the limit, a tail that ends the range (tail_n 0: no tail,
 * the head is all there is). */
typedef struct OutputChunks {
        const uint8_t *head;
        size_t head_n;
        uint64_t head_offset;
        const uint8_t *tail;
        size_t tail_n;
        uint64_t tail_offset;
        /* Chunks that were filtered (a terminal's plain text) are no longer
         * the bytes at those offsets: the marker then names the offsets of
         * the chunks as read, head_offset + head_read_n and tail_offset. */
        bool filtered;
        size_t head_read_n;
} OutputChunks;

/* How much to read for an output of `available` bytes from offset with this
 * limit: the head's length and, if one is needed, the tail's offset and
 * length (0 if none). */
void mcp_output_plan(uint64_t offset, uint64_t available, size_t limit, size_t *ret_head_n,
                     uint64_t *ret_tail_offset, size_t *ret_tail_n);

/* Where a range that was cut short (more output follows it) should end, so
 * that the next read goes on from there and no line is cut: after the last
 * newline of its last quarter, else at the end of its last whole UTF-8
 * character (else, with none, all of it). The bytes of data[0..n) to keep. */
size_t mcp_output_range_end(const uint8_t *data, size_t n);

/* The text of c in at most limit bytes, NUL-terminated. */
int mcp_output_format(const OutputChunks *c, size_t limit, char **ret, size_t *ret_len);

/* Bytes of data, n long, with everything that is not UTF-8 replaced: the
 * length of the valid sequence at data (1..4), or 0 for an invalid byte. */
size_t mcp_utf8_sequence(const uint8_t *data, size_t n);
