/* SPDX-License-Identifier: MIT */
#pragma once

/* Where a job's output is kept, as offsets: pure arithmetic, no I/O, so that
 * the supervisor (which writes), bgrund (which reads) and the tests agree.
 *
 * Offsets are logical: they count the bytes the job wrote. Of those,
 * OutputMaxBytes= (the cap) are kept: the first half (the head, which gets
 * the odd byte) and the last half (the tail); the middle is dropped and
 * counted. KeepFree= can drop more (see output_layout_low_space()). Whatever
 * happens, what is kept is one head [0, head) and one tail
 * [tail_start, total), so there is never more than one gap:
 *
 *   LINEAR     the usual case, and every job under its cap. The file
 *              `output` holds [0, total) exactly as written; nothing else
 *              exists (no state file: a job that writes little costs
 *              nothing more than its bytes).
 *   RING       the cap was reached (or free space ran low). `output` is
 *              frozen at `frozen` bytes and never written again (only
 *              shortened to `head` when its tail part is dropped), so a
 *              reader that follows it sequentially never reads a byte that
 *              was replaced. New bytes go to `output.tail`, a ring of
 *              ring_size positions: logical L is at (L - ring_origin) mod
 *              ring_size. The tail may begin in `output` (its bytes
 *              [tail_start, frozen)) and go on in the ring.
 *   COMPACTED  final, after the job ended: `output` is head + marker +
 *              tail, what OpenOutput hands out and `bgrun logs` prints.
 *
 * A layout that dropped nothing reads the same in every phase. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum OutputPhase {
        OUTPUT_LINEAR,
        OUTPUT_RING,
        OUTPUT_COMPACTED,
        _OUTPUT_PHASE_MAX,
} OutputPhase;

typedef struct OutputLayout {
        OutputPhase phase;
        uint64_t cap;         /* OutputMaxBytes=: head and tail together; UINT64_MAX: no cap */
        uint64_t total;       /* bytes the job wrote: output_bytes */
        uint64_t head;        /* kept head [0, head), at the start of `output` (LINEAR: == total) */
        uint64_t tail_start;  /* kept tail [tail_start, total) (LINEAR: == total) */
        uint64_t frozen;      /* RING: `output` holds [0, frozen) */
        uint64_t ring_origin; /* RING: the logical offset at ring position 0 */
        uint64_t ring_size;   /* RING: ring positions in use; 0 while output is dropped */
        uint64_t generation;  /* changes whenever the mapping does (not for new bytes) */
} OutputLayout;

/* The marker that stands for the dropped middle in the kept output (and in
 * what bgrun prints), one line of its own:
 *   "\n[bgrun: 123456789 bytes of output dropped here]\n"
 * Empty when nothing was dropped. Its length depends on the count only. */
#define OUTPUT_MARKER_MAX 64
size_t output_marker(uint64_t dropped, char buf[static OUTPUT_MARKER_MAX]);

/* The cap's halves: the head gets the odd byte. */
uint64_t output_head_max(uint64_t cap);
uint64_t output_tail_max(uint64_t cap);

void output_layout_init(OutputLayout *l, uint64_t cap);

static inline uint64_t output_layout_dropped(const OutputLayout *l) {
        return l->tail_start - l->head;
}
static inline bool output_layout_truncated(const OutputLayout *l) {
        return l->tail_start > l->head;
}
static inline uint64_t output_layout_tail_length(const OutputLayout *l) {
        return l->total - l->tail_start;
}

/* --- writing (the supervisor) ----------------------------------------- */

typedef enum OutputStepKind {
        OUTPUT_STEP_LINEAR, /* write to `output` at offset */
        OUTPUT_STEP_RING,   /* write to `output.tail` at offset */
        OUTPUT_STEP_DROP,   /* drop: no room */
} OutputStepKind;

typedef struct OutputStep {
        OutputStepKind kind;
        uint64_t offset;     /* in the step's file */
        uint64_t length;     /* at most this many bytes, in one contiguous piece */
        uint64_t tail_start; /* RING: the tail's start with length bytes written: publish it
                              * before writing, as those bytes replace older ones */
} OutputStep;

/* Whether the next byte needs the ring: LINEAR with the cap reached. The
 * writer then calls output_layout_freeze() and publishes the layout before
 * writing on. */
bool output_layout_at_cap(const OutputLayout *l);

/* LINEAR → RING: `output` holds what it holds for good; the tail begins
 * right after the head and continues into the ring. */
void output_layout_freeze(OutputLayout *l);

/* The next step for up to avail (> 0) bytes. Never LINEAR at the cap (freeze
 * first). */
void output_layout_next_step(const OutputLayout *l, uint64_t avail, OutputStep *ret);

/* n bytes of step were written (n <= step->length), or dropped (DROP).
 * Returns true when `output` holds bytes past the head that are kept no
 * more (the tail moved on into the ring, or a drop ended the tail): frozen
 * is then head, and the writer gives their room back by shortening `output`
 * to head, after publishing the layout. */
bool output_layout_advance(OutputLayout *l, const OutputStep *step, uint64_t n);

/* Free space is short: the files must not grow. LINEAR freezes; a ring that
 * has not wrapped yet shrinks to what it holds (it goes on in place, no byte
 * is dropped for it, until output_layout_space_back() gives it its size
 * back); an empty ring means dropping from now on. A full ring grows no
 * more: nothing changes. Returns true when the layout changed. */
bool output_layout_low_space(OutputLayout *l);

/* Free space is back: the ring gets all the cap left over from the head
 * again. One that was dropping output starts again, empty; one that shrank
 * grows in place if it has not wrapped since, or else starts over, empty,
 * its bytes dropped (else a brief low moment would shrink it for good). The
 * writer publishes the layout, then empties the ring file if the ring
 * starts over (ring_origin is total) and shortens `output` to the head if
 * *ret_reclaim. Returns true when the layout changed. */
bool output_layout_space_back(OutputLayout *l, bool *ret_reclaim);

/* The ring can take no byte more (a full ring that cannot be overwritten
 * either, as on a copy-on-write filesystem): the tail ends here, and output
 * is dropped until output_layout_space_back(). Returns what
 * output_layout_advance() does: whether `output` is to be shortened to the
 * head. */
bool output_layout_end_ring(OutputLayout *l);

/* Whether the free space matters for the next bytes: they grow a file, or
 * they are dropped until there is room again. A full ring is overwritten in
 * place and needs no room. */
bool output_layout_needs_space(const OutputLayout *l);

/* RING → COMPACTED, the arithmetic only: what the file becomes (head,
 * marker, tail), and its size. */
void output_layout_compacted(const OutputLayout *l, OutputLayout *ret);
uint64_t output_layout_compacted_size(const OutputLayout *l);

/* --- reading (bgrund) --------------------------------------------------- */

typedef enum OutputFile {
        OUTPUT_FILE_MAIN, /* `output` */
        OUTPUT_FILE_RING, /* `output.tail` */
} OutputFile;

typedef struct OutputExtent {
        uint64_t start;  /* logical: offset, or the tail's start if offset is in the gap */
        OutputFile file;
        uint64_t offset; /* in file */
        uint64_t length; /* contiguous in file; 0: nothing kept at or after offset */
} OutputExtent;

/* Where the kept bytes at logical offset are, up to max of them: the first
 * contiguous piece. An offset in the dropped middle reads from the tail's
 * start; a piece never spans the gap (so a reader learns where it is from
 * start). length 0 means nothing at or after offset (yet). */
void output_layout_map(const OutputLayout *l, uint64_t offset, uint64_t max, OutputExtent *ret);

/* --- the state file ------------------------------------------------------ */

/* The layout as bgrund reads it while the supervisor writes it: fixed size,
 * native byte order (one machine), with the inode of the `output` it
 * describes and a checksum, so a torn read (a pread racing a pwrite) is
 * detected and read again. */
#define OUTPUT_STATE_SIZE 128
void output_state_encode(const OutputLayout *l, uint64_t output_ino, uint8_t buf[static OUTPUT_STATE_SIZE]);
/* -EBADMSG for anything but a whole, consistent state. */
int output_state_decode(const uint8_t *buf, size_t len, OutputLayout *ret, uint64_t *ret_output_ino);
