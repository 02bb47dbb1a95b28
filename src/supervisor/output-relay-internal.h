/* SPDX-License-Identifier: MIT */
#pragma once

/* What the three files of the output relay share: the relaying itself
 * (output-relay.c), what the output may keep (output-room.c) and its
 * compaction at the end (output-compact.c). Not for anyone else: the
 * supervisor uses output-relay.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output-relay.h"

/* "1.5M" or "512B", into buf. */
char *output_format_size(char *buf, size_t len, uint64_t bytes);

/* The state file, reserved at the start; dropped at the end when the
 * output never left LINEAR. */
void output_room_reserve(OutputRelay *r);
void output_room_drop_unused_state(OutputRelay *r);

/* Tell readers the layout l (output.state); on failure the relay goes
 * blind (drops from here on) and the error is returned. */
int output_room_publish(OutputRelay *r, const OutputLayout *l);

/* Once readers know the ring's bytes are kept no more (ring) and maybe
 * `output`'s past its head neither (reclaim): give their room back. */
void output_room_give_back(OutputRelay *r, bool ring, bool reclaim);

/* Before relaying: free space against KeepFree= (not on every write), and
 * the owner's budget: false while the pipe waits for bgrund's answer;
 * *avail is lowered to what the budget lets grow. */
void output_room_check_space(OutputRelay *r);
bool output_room_check_budget(OutputRelay *r, uint64_t *avail);

/* A write to an output file failed (error < 0): dropped, counted, and the
 * pipe drained all the same. */
void output_room_file_failed(OutputRelay *r, int error);

/* RING → COMPACTED at the end, if there is room. */
void output_relay_compact(OutputRelay *r);
