/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "output-layout.h"

static inline uint64_t max_u64(uint64_t a, uint64_t b) {
        return a > b ? a : b;
}

size_t output_marker(uint64_t dropped, char buf[static OUTPUT_MARKER_MAX]) {
        if (dropped == 0) {
                buf[0] = '\0';
                return 0;
        }
        /* A newline first: the head ends anywhere in a line, and the marker
         * must be a line of its own whatever the bytes around it are. */
        int n = snprintf(buf, OUTPUT_MARKER_MAX, "\n[bgrun: %" PRIu64 " bytes of output dropped here]\n", dropped);
        return n > 0 ? (size_t) n : 0;
}

uint64_t output_head_max(uint64_t cap) {
        return cap - cap / 2;
}

uint64_t output_tail_max(uint64_t cap) {
        return cap / 2;
}

void output_layout_init(OutputLayout *l, uint64_t cap) {
        *l = (OutputLayout) { .phase = OUTPUT_LINEAR, .cap = cap };
}

/* The cap left over for the tail once the head is fixed. */
static uint64_t ring_capacity(const OutputLayout *l) {
        return l->cap - MIN(l->head, l->cap);
}

/* Bytes the ring file holds from its start: it is written from position 0
 * on, once around at most before it wraps. */
static uint64_t ring_used(const OutputLayout *l) {
        return MIN(l->ring_size, l->total - l->ring_origin);
}

bool output_layout_at_cap(const OutputLayout *l) {
        return l->phase == OUTPUT_LINEAR && l->cap != UINT64_MAX && l->total >= l->cap;
}

void output_layout_freeze(OutputLayout *l) {
        if (l->phase != OUTPUT_LINEAR)
                return;
        l->phase = OUTPUT_RING;
        l->frozen = l->total;
        l->head = MIN(l->total, output_head_max(l->cap));
        /* What follows the head is still the latest output: the tail. */
        l->tail_start = l->head;
        l->ring_origin = l->total;
        l->ring_size = ring_capacity(l);
        l->generation++;
}

void output_layout_next_step(const OutputLayout *l, uint64_t avail, OutputStep *ret) {
        switch (l->phase) {
        case OUTPUT_LINEAR:
                *ret = (OutputStep) {
                        .kind = OUTPUT_STEP_LINEAR,
                        .offset = l->total,
                        .length = l->cap == UINT64_MAX ? avail : MIN(avail, l->cap - MIN(l->total, l->cap)),
                };
                return;
        case OUTPUT_RING:
                if (l->ring_size > 0) {
                        uint64_t pos = (l->total - l->ring_origin) % l->ring_size;
                        uint64_t len = MIN(avail, l->ring_size - pos);
                        uint64_t end = l->total + len;
                        uint64_t first = end > l->ring_size ? end - l->ring_size : 0;
                        *ret = (OutputStep) {
                                .kind = OUTPUT_STEP_RING,
                                .offset = pos,
                                .length = len,
                                .tail_start = max_u64(l->tail_start, first),
                        };
                        return;
                }
                break;
        default:
                break;
        }
        *ret = (OutputStep) { .kind = OUTPUT_STEP_DROP, .length = avail };
}

bool output_layout_advance(OutputLayout *l, const OutputStep *step, uint64_t n) {
        switch (step->kind) {
        case OUTPUT_STEP_LINEAR:
                l->total += n;
                l->head = l->tail_start = l->total;
                return false;
        case OUTPUT_STEP_RING:
                l->total += n;
                /* The ring keeps its last ring_size bytes, and the part of
                 * the tail in `output` only while it joins up with them. */
                if (l->total > l->ring_size)
                        l->tail_start = max_u64(l->tail_start, l->total - l->ring_size);
                if (l->tail_start >= l->frozen && l->frozen > l->head) {
                        /* The tail left `output`: what it held past the head
                         * is dropped for good, its room can go back. */
                        l->frozen = l->head;
                        l->generation++;
                        return true;
                }
                return false;
        case OUTPUT_STEP_DROP:
        default: {
                /* Bytes went missing at the end: what was kept before them is
                 * no longer the last output. The tail starts over, empty. */
                bool reclaim = l->phase == OUTPUT_RING && l->frozen > l->head;
                l->total += n;
                l->tail_start = l->total;
                if (reclaim) {
                        l->frozen = l->head;
                        l->generation++;
                }
                return reclaim;
        }
        }
}

bool output_layout_low_space(OutputLayout *l) {
        switch (l->phase) {
        case OUTPUT_LINEAR:
                output_layout_freeze(l);
                l->ring_size = 0;
                return true;
        case OUTPUT_RING: {
                uint64_t used = ring_used(l);
                if (used >= l->ring_size)
                        return false; /* full (or dropping): overwriting takes no room */
                /* Not wrapped yet, so every byte is at the same position in
                 * a ring of the size it has now. */
                l->ring_size = used;
                l->generation++;
                return true;
        }
        default:
                return false;
        }
}

bool output_layout_end_ring(OutputLayout *l) {
        if (l->phase != OUTPUT_RING)
                return false;
        bool reclaim = l->frozen > l->head;
        l->tail_start = l->total;
        l->frozen = l->head;
        l->ring_origin = l->total;
        l->ring_size = 0;
        l->generation++;
        return reclaim;
}

bool output_layout_space_back(OutputLayout *l, bool *ret_reclaim) {
        *ret_reclaim = false;
        if (l->phase != OUTPUT_RING)
                return false;
        uint64_t size = ring_capacity(l);
        if (l->ring_size >= size)
                return false;
        if (l->ring_size > 0 && l->total - l->ring_origin <= l->ring_size) {
                /* It shrank while space was short and has not wrapped since:
                 * every byte stays where it is in a larger ring. */
                l->ring_size = size;
                l->generation++;
                return true;
        }
        /* Wrapped in its smaller size, it cannot grow in place: it starts
         * over, empty, and what it held joins the dropped middle (a ring
         * that was dropping held nothing). */
        if (l->ring_size > 0)
                *ret_reclaim = output_layout_end_ring(l);
        l->ring_origin = l->total;
        l->ring_size = size;
        l->generation++;
        return true;
}

bool output_layout_needs_space(const OutputLayout *l) {
        switch (l->phase) {
        case OUTPUT_LINEAR:
                return true;
        case OUTPUT_RING:
                return l->ring_size == 0 || ring_used(l) < l->ring_size;
        default:
                return false;
        }
}

uint64_t output_layout_compacted_size(const OutputLayout *l) {
        char marker[OUTPUT_MARKER_MAX];
        return l->head + output_marker(output_layout_dropped(l), marker) + output_layout_tail_length(l);
}

void output_layout_compacted(const OutputLayout *l, OutputLayout *ret) {
        *ret = (OutputLayout) {
                .phase = OUTPUT_COMPACTED,
                .cap = l->cap,
                .total = l->total,
                .head = l->head,
                .tail_start = l->tail_start,
                .generation = l->generation + 1,
        };
}

void output_layout_map(const OutputLayout *l, uint64_t offset, uint64_t max, OutputExtent *ret) {
        *ret = (OutputExtent) { .start = offset, .file = OUTPUT_FILE_MAIN, .offset = offset };

        if (l->phase == OUTPUT_LINEAR) {
                if (offset < l->total)
                        ret->length = MIN(max, l->total - offset);
                return;
        }
        if (offset < l->head) {
                ret->length = MIN(max, l->head - offset);
                return;
        }

        uint64_t at = max_u64(offset, l->tail_start);
        ret->start = at;
        if (at >= l->total) {
                ret->offset = 0;
                return;
        }
        uint64_t want = MIN(max, l->total - at);

        if (l->phase == OUTPUT_COMPACTED) {
                char marker[OUTPUT_MARKER_MAX];
                ret->offset = l->head + output_marker(output_layout_dropped(l), marker) + (at - l->tail_start);
                ret->length = want;
                return;
        }
        if (at < l->frozen) {
                ret->offset = at;
                ret->length = MIN(want, l->frozen - at);
                return;
        }
        if (l->ring_size == 0 || at < l->ring_origin) {
                ret->offset = 0; /* cannot be for a valid layout: nothing to read */
                return;
        }
        uint64_t pos = (at - l->ring_origin) % l->ring_size;
        ret->file = OUTPUT_FILE_RING;
        ret->offset = pos;
        ret->length = MIN(want, l->ring_size - pos);
}

/* --- the state file ------------------------------------------------------ */

#define STATE_MAGIC UINT64_C(0x54554f4e55524742) /* "BGRUNOUT" */
#define STATE_VERSION 1

enum {
        F_MAGIC,
        F_VERSION_PHASE,
        F_CAP,
        F_TOTAL,
        F_HEAD,
        F_TAIL_START,
        F_FROZEN,
        F_RING_ORIGIN,
        F_RING_SIZE,
        F_GENERATION,
        F_OUTPUT_INO,
        _F_MAX,
        F_CHECKSUM = OUTPUT_STATE_SIZE / 8 - 1,
};

/* FNV-1a: not for security (only root writes the file), for torn reads. */
static uint64_t checksum(const uint8_t *p, size_t n) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

void output_state_encode(const OutputLayout *l, uint64_t output_ino, uint8_t buf[static OUTPUT_STATE_SIZE]) {
        uint64_t f[OUTPUT_STATE_SIZE / 8] = {
                [F_MAGIC] = STATE_MAGIC,
                [F_VERSION_PHASE] = (uint64_t) STATE_VERSION << 32 | (uint32_t) l->phase,
                [F_CAP] = l->cap,
                [F_TOTAL] = l->total,
                [F_HEAD] = l->head,
                [F_TAIL_START] = l->tail_start,
                [F_FROZEN] = l->frozen,
                [F_RING_ORIGIN] = l->ring_origin,
                [F_RING_SIZE] = l->ring_size,
                [F_GENERATION] = l->generation,
                [F_OUTPUT_INO] = output_ino,
        };
        f[F_CHECKSUM] = checksum((const uint8_t *) f, F_CHECKSUM * 8);
        memcpy(buf, f, OUTPUT_STATE_SIZE);
}

/* What a reader relies on: every kept byte is in a file, where map() says. */
static bool layout_is_consistent(const OutputLayout *l) {
        if (l->head > l->tail_start || l->tail_start > l->total)
                return false;
        if (l->phase == OUTPUT_COMPACTED)
                return true;
        if (l->phase != OUTPUT_RING)
                return l->head == l->total && l->tail_start == l->total;
        if (l->head > l->frozen || l->frozen > l->ring_origin || l->ring_origin > l->total)
                return false;
        if (l->tail_start < l->frozen)
                /* The tail begins in `output` only where the ring joins up. */
                return l->ring_origin == l->frozen && l->total - l->frozen <= l->ring_size;
        return l->tail_start >= l->ring_origin && l->total - l->tail_start <= l->ring_size;
}

int output_state_decode(const uint8_t *buf, size_t len, OutputLayout *ret, uint64_t *ret_output_ino) {
        uint64_t f[OUTPUT_STATE_SIZE / 8];
        if (len != OUTPUT_STATE_SIZE)
                return -EBADMSG;
        memcpy(f, buf, sizeof f);
        if (f[F_MAGIC] != STATE_MAGIC || f[F_VERSION_PHASE] >> 32 != STATE_VERSION ||
            f[F_CHECKSUM] != checksum((const uint8_t *) f, F_CHECKSUM * 8))
                return -EBADMSG;
        uint32_t phase = (uint32_t) f[F_VERSION_PHASE];
        if (phase >= _OUTPUT_PHASE_MAX)
                return -EBADMSG;
        OutputLayout l = {
                .phase = (OutputPhase) phase,
                .cap = f[F_CAP],
                .total = f[F_TOTAL],
                .head = f[F_HEAD],
                .tail_start = f[F_TAIL_START],
                .frozen = f[F_FROZEN],
                .ring_origin = f[F_RING_ORIGIN],
                .ring_size = f[F_RING_SIZE],
                .generation = f[F_GENERATION],
        };
        if (!layout_is_consistent(&l))
                return -EBADMSG;
        *ret = l;
        if (ret_output_ino)
                *ret_output_ino = f[F_OUTPUT_INO];
        return 0;
}
