/* SPDX-License-Identifier: MIT */
/* The output's layout, pure arithmetic: halves, the marker, the writer's
 * steps, the reader's map, compaction, the state's encoding. A model writer
 * keeps the two files in memory and every byte is checked against what the
 * job wrote. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "output-layout.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* --- the marker and the halves ----------------------------------------- */

Test(output_layout, the_marker_is_one_line_of_its_own) {
        char m[OUTPUT_MARKER_MAX];
        cr_assert_eq(output_marker(123456789, m), strlen(m));
        cr_assert_str_eq(m, "\n[bgrun: 123456789 bytes of output dropped here]\n");
        cr_assert_eq(output_marker(0, m), 0, "nothing dropped, no marker");
        cr_assert_str_eq(m, "");
        size_t n = output_marker(UINT64_MAX, m);
        cr_assert_eq(n, strlen("\n[bgrun: 18446744073709551615 bytes of output dropped here]\n"));
        cr_assert_lt(n, OUTPUT_MARKER_MAX);
        /* Its length follows from the count alone (readers compute it). */
        char m2[OUTPUT_MARKER_MAX];
        cr_assert_eq(output_marker(100, m), output_marker(999, m2));
        cr_assert_neq(output_marker(99, m), output_marker(100, m2));
}

Test(output_layout, the_head_gets_the_odd_byte) {
        cr_assert_eq(output_head_max(1), 1);
        cr_assert_eq(output_tail_max(1), 0);
        cr_assert_eq(output_head_max(2), 1);
        cr_assert_eq(output_tail_max(2), 1);
        cr_assert_eq(output_head_max(7), 4);
        cr_assert_eq(output_tail_max(7), 3);
        cr_assert_eq(output_head_max(1 << 20) + output_tail_max(1 << 20), 1 << 20);
        cr_assert_eq(output_head_max(UINT64_MAX) + output_tail_max(UINT64_MAX), UINT64_MAX);
}

/* --- a model writer -------------------------------------------------------- */

/* What the job writes: byte L of its output. */
static uint8_t job_byte(uint64_t l) {
        return (uint8_t) ((l * 7 + l / 251) % 251);
}

typedef struct Model {
        OutputLayout l;
        uint8_t *main, *ring; /* `output` and `output.tail` */
        size_t main_size, ring_size, alloc;
        unsigned published; /* how often the writer had to publish before writing */
} Model;

static void model_init(Model *m, uint64_t cap, size_t alloc) {
        *m = (Model) { .alloc = alloc };
        output_layout_init(&m->l, cap);
        m->main = calloc(alloc, 1);
        m->ring = calloc(alloc, 1);
        cr_assert(m->main && m->ring);
}

/* Free space, as the supervisor reacts to it: a ring that starts over
 * starts from an emptied file. */
static bool model_low(Model *m) {
        return output_layout_low_space(&m->l);
}

static void check_reads(const Model *m);

static bool model_back(Model *m) {
        bool reclaim;
        uint64_t origin = m->l.ring_origin;
        if (!output_layout_space_back(&m->l, &reclaim))
                return false;
        if (m->l.ring_origin != origin || m->l.total == origin)
                m->ring_size = 0; /* started over: the file is emptied */
        if (reclaim)
                m->main_size = m->l.head;
        check_reads(m);
        return true;
}

static bool model_end(Model *m) {
        bool reclaim = output_layout_end_ring(&m->l);
        if (reclaim)
                m->main_size = m->l.head;
        return reclaim;
}

static void model_done(Model *m) {
        free(m->main);
        free(m->ring);
}

/* The kept bytes, by the reader's map, are the job's bytes at their
 * offsets; and nothing but the head and the tail is found. */
static void check_reads(const Model *m) {
        const OutputLayout *l = &m->l;
        cr_assert_leq(l->head, l->tail_start);
        cr_assert_leq(l->tail_start, l->total);
        if (l->cap != UINT64_MAX)
                cr_assert_leq(l->head + output_layout_tail_length(l), l->cap, "more kept than the cap");
        for (uint64_t off = 0; off <= l->total + 1; off++) {
                OutputExtent e;
                output_layout_map(l, off, UINT64_MAX, &e);
                if (off < l->head)
                        cr_assert_eq(e.start, off);
                else if (off < l->tail_start)
                        cr_assert_eq(e.start, l->tail_start, "a read in the gap starts at the tail");
                else
                        cr_assert_eq(e.start, off);
                if (e.start >= l->total) {
                        cr_assert_eq(e.length, 0);
                        continue;
                }
                cr_assert_gt(e.length, 0, "offset %lu of %lu", (unsigned long) off, (unsigned long) l->total);
                if (off < l->head)
                        cr_assert_leq(e.start + e.length, l->head, "a piece never spans the gap");
                const uint8_t *f = e.file == OUTPUT_FILE_RING ? m->ring : m->main;
                size_t fsize = e.file == OUTPUT_FILE_RING ? m->ring_size : m->main_size;
                cr_assert_leq(e.offset + e.length, fsize, "reads past its file");
                for (uint64_t i = 0; i < e.length; i++)
                        cr_assert_eq(f[e.offset + i], job_byte(e.start + i), "byte %lu (file %d at %lu)",
                                     (unsigned long) (e.start + i), e.file, (unsigned long) (e.offset + i));
        }
}

/* The writer: n bytes, in steps of at most chunk. */
static void model_write(Model *m, uint64_t n, uint64_t chunk) {
        while (n > 0) {
                if (output_layout_at_cap(&m->l))
                        output_layout_freeze(&m->l);
                OutputStep s;
                output_layout_next_step(&m->l, MIN(n, chunk), &s);
                cr_assert_gt(s.length, 0);
                cr_assert_leq(s.length, MIN(n, chunk));
                uint64_t at = m->l.total;
                switch (s.kind) {
                case OUTPUT_STEP_LINEAR:
                        cr_assert_eq(s.offset, at);
                        cr_assert_eq(m->main_size, at, "linear: `output` is all of it");
                        for (uint64_t i = 0; i < s.length; i++)
                                m->main[s.offset + i] = job_byte(at + i);
                        m->main_size = s.offset + s.length;
                        break;
                case OUTPUT_STEP_RING:
                        cr_assert_leq(s.offset + s.length, m->l.ring_size, "past the ring");
                        /* What it overwrites is no longer in the tail it
                         * publishes first. */
                        for (uint64_t i = 0; i < s.length; i++) {
                                if (s.offset + i < m->ring_size) {
                                        uint64_t old = at + i - m->l.ring_size;
                                        cr_assert_lt(old, s.tail_start, "overwrites a kept byte");
                                }
                                m->ring[s.offset + i] = job_byte(at + i);
                        }
                        if (s.tail_start > m->l.tail_start)
                                m->published++;
                        m->ring_size = MAX(m->ring_size, s.offset + s.length);
                        break;
                case OUTPUT_STEP_DROP:
                        break;
                }
                bool reclaim = output_layout_advance(&m->l, &s, s.length);
                if (reclaim) {
                        cr_assert_eq(m->l.frozen, m->l.head);
                        m->main_size = m->l.head; /* ftruncate */
                }
                cr_assert_eq(m->l.total, at + s.length);
                n -= s.length;
        }
        check_reads(m);
}

/* What compaction writes, and that it reads as the layout says. */
static void check_compacted(const Model *m, uint64_t expect_head, uint64_t expect_tail) {
        const OutputLayout *l = &m->l;
        cr_assert_eq(l->head, expect_head);
        cr_assert_eq(output_layout_tail_length(l), expect_tail);
        cr_assert_eq(output_layout_dropped(l), l->total - expect_head - expect_tail);

        uint64_t size = output_layout_compacted_size(l);
        uint8_t *out = malloc(size + 1);
        char marker[OUTPUT_MARKER_MAX];
        size_t mlen = output_marker(output_layout_dropped(l), marker);
        cr_assert_eq(size, l->head + mlen + expect_tail);
        size_t pos = 0;
        for (uint64_t i = 0; i < l->head; i++)
                out[pos++] = job_byte(i);
        memcpy(out + pos, marker, mlen);
        pos += mlen;
        for (uint64_t at = l->tail_start; at < l->total;) {
                OutputExtent e;
                output_layout_map(l, at, l->total - at, &e);
                cr_assert_eq(e.start, at);
                const uint8_t *f = e.file == OUTPUT_FILE_RING ? m->ring : m->main;
                memcpy(out + pos, f + e.offset, e.length);
                pos += e.length;
                at += e.length;
        }
        cr_assert_eq(pos, size);
        /* The tail is the last bytes the job wrote, exactly. */
        for (uint64_t i = 0; i < expect_tail; i++)
                cr_assert_eq(out[l->head + mlen + i], job_byte(l->total - expect_tail + i));

        OutputLayout c;
        output_layout_compacted(l, &c);
        cr_assert_eq(c.phase, OUTPUT_COMPACTED);
        cr_assert_eq(c.total, l->total);
        cr_assert_gt(c.generation, l->generation);
        for (uint64_t off = 0; off < l->total; off++) {
                OutputExtent e;
                output_layout_map(&c, off, UINT64_MAX, &e);
                if (e.length == 0) {
                        cr_assert_eq(expect_tail, 0);
                        continue;
                }
                cr_assert_eq(e.file, OUTPUT_FILE_MAIN);
                cr_assert_leq(e.offset + e.length, size);
                for (uint64_t i = 0; i < e.length; i++)
                        cr_assert_eq(out[e.offset + i], job_byte(e.start + i));
        }
        free(out);
}

/* --- the cap ---------------------------------------------------------------- */

Test(output_layout, under_and_exactly_at_the_cap_nothing_is_dropped) {
        Model m;
        model_init(&m, 10, 64);
        model_write(&m, 9, 4);
        cr_assert_eq(m.l.phase, OUTPUT_LINEAR);
        cr_assert_not(output_layout_at_cap(&m.l));
        model_write(&m, 1, 4);
        cr_assert_eq(m.l.total, 10);
        cr_assert(output_layout_at_cap(&m.l), "the next byte needs the ring");
        cr_assert_eq(m.l.phase, OUTPUT_LINEAR, "not before it comes");
        cr_assert_not(output_layout_truncated(&m.l));
        cr_assert_eq(output_layout_dropped(&m.l), 0);
        cr_assert_eq(m.main_size, 10);
        model_done(&m);
}

Test(output_layout, one_byte_over_the_cap_drops_one) {
        Model m;
        model_init(&m, 10, 64);
        model_write(&m, 11, 100);
        cr_assert_eq(m.l.phase, OUTPUT_RING);
        cr_assert(output_layout_truncated(&m.l));
        cr_assert_eq(output_layout_dropped(&m.l), 1);
        cr_assert_eq(m.l.head, 5);
        cr_assert_eq(m.l.tail_start, 6, "byte 5, the middle, is the one dropped");
        cr_assert_eq(m.l.frozen, 10, "`output` is left as it was");
        /* The tail: 6..9 still in `output`, 10 in the ring. */
        OutputExtent e;
        output_layout_map(&m.l, 5, 100, &e);
        cr_assert_eq(e.start, 6);
        cr_assert_eq(e.file, OUTPUT_FILE_MAIN);
        cr_assert_eq(e.length, 4);
        output_layout_map(&m.l, 10, 100, &e);
        cr_assert_eq(e.file, OUTPUT_FILE_RING);
        cr_assert_eq(e.offset, 0);
        cr_assert_eq(e.length, 1);
        check_compacted(&m, 5, 5);
        model_done(&m);
}

Test(output_layout, the_tail_leaves_output_and_its_room_goes_back) {
        Model m;
        model_init(&m, 10, 64);
        model_write(&m, 15, 1);
        cr_assert_eq(m.l.frozen, 5, "once the tail is all in the ring, `output` is the head");
        cr_assert_eq(m.main_size, 5);
        model_write(&m, 100, 3);
        cr_assert_eq(m.l.total, 115);
        check_compacted(&m, 5, 5);
        cr_assert_gt(m.published, 0, "the ring's overwrites were announced");
        model_done(&m);
}

Test(output_layout, odd_caps_and_every_length) {
        static const uint64_t caps[] = { 1, 2, 3, 7, 8, 33 };
        for (size_t c = 0; c < ELEMENTSOF(caps); c++)
                for (uint64_t total = 0; total <= 4 * caps[c] + 3; total++)
                        for (uint64_t chunk = 1; chunk <= caps[c] + 2; chunk += caps[c] / 2 + 1) {
                                Model m;
                                model_init(&m, caps[c], 256);
                                model_write(&m, total, chunk);
                                /* Up to the cap, LINEAR: all of it is the head. */
                                uint64_t head = total <= caps[c] ? total : output_head_max(caps[c]);
                                uint64_t tail = total <= caps[c] ? 0 : output_tail_max(caps[c]);
                                cr_assert_eq(m.l.phase, total <= caps[c] ? OUTPUT_LINEAR : OUTPUT_RING);
                                cr_assert_eq(output_layout_truncated(&m.l), total > caps[c], "cap %lu total %lu",
                                             (unsigned long) caps[c], (unsigned long) total);
                                check_compacted(&m, head, tail);
                                model_done(&m);
                        }
}

Test(output_layout, cap_zero_keeps_nothing) {
        /* The configuration refuses 0; the layout copes anyway. */
        Model m;
        model_init(&m, 0, 64);
        cr_assert(output_layout_at_cap(&m.l));
        model_write(&m, 20, 7);
        cr_assert_eq(output_layout_dropped(&m.l), 20);
        check_compacted(&m, 0, 0);
        cr_assert_eq(m.main_size, 0);
        cr_assert_eq(m.ring_size, 0);
        model_done(&m);
}

Test(output_layout, no_cap_stays_linear) {
        Model m;
        model_init(&m, UINT64_MAX, 4096);
        model_write(&m, 4000, 333);
        cr_assert_eq(m.l.phase, OUTPUT_LINEAR);
        cr_assert_not(output_layout_at_cap(&m.l));
        cr_assert_eq(m.l.head, 4000);
        cr_assert_eq(m.l.tail_start, 4000);
        model_done(&m);
}

/* --- free space (KeepFree=) ------------------------------------------------ */

Test(output_layout, low_space_before_the_cap_freezes_and_drops_then_resumes) {
        Model m;
        model_init(&m, 100, 256);
        model_write(&m, 30, 8);
        cr_assert(model_low(&m));
        cr_assert_eq(m.l.phase, OUTPUT_RING);
        cr_assert_eq(m.l.head, 30, "the head is what there is");
        cr_assert_not(output_layout_truncated(&m.l), "nothing dropped yet");
        cr_assert(output_layout_needs_space(&m.l), "dropping: free space is looked at, to resume");
        model_write(&m, 25, 10);
        cr_assert_eq(output_layout_dropped(&m.l), 25);
        cr_assert_eq(m.l.tail_start, 55);
        cr_assert_not(model_low(&m), "nothing more to give up");

        cr_assert(model_back(&m));
        cr_assert_eq(m.l.ring_size, 70, "the cap's rest: 100 - a head of 30");
        cr_assert_eq(m.l.ring_origin, 55);
        model_write(&m, 50, 9);
        cr_assert_eq(output_layout_dropped(&m.l), 25, "nothing more dropped");
        check_compacted(&m, 30, 50);
        model_write(&m, 100, 9);
        check_compacted(&m, 30, 70);
        model_done(&m);
}

Test(output_layout, low_space_past_the_head_drops_the_tail_and_gives_its_room_back) {
        Model m;
        model_init(&m, 100, 256);
        model_write(&m, 80, 8);
        cr_assert(model_low(&m));
        cr_assert_eq(m.l.head, 50);
        cr_assert_eq(m.l.tail_start, 50, "80 bytes, all of them still kept");
        check_compacted(&m, 50, 30);
        model_write(&m, 1, 1);
        cr_assert_eq(m.main_size, 50, "the tail ended: `output` shortened to the head");
        cr_assert_eq(output_layout_dropped(&m.l), 31);
        check_compacted(&m, 50, 0);
        model_done(&m);
}

Test(output_layout, low_space_shrinks_a_ring_that_has_not_wrapped) {
        Model m;
        model_init(&m, 100, 256);
        model_write(&m, 120, 7);
        cr_assert_eq(m.l.ring_size, 50);
        cr_assert(output_layout_needs_space(&m.l), "the ring still grows");
        cr_assert(model_low(&m));
        cr_assert_eq(m.l.ring_size, 20, "the ring is what it holds");
        cr_assert_not(output_layout_needs_space(&m.l), "full: overwritten in place");
        model_write(&m, 200, 7);
        cr_assert_eq(m.ring_size, 20, "it did not grow");
        cr_assert_eq(output_layout_dropped(&m.l), 320 - 50 - 20);
        check_compacted(&m, 50, 20);
        /* Space back: not shrunk for good. The ring wrapped in its small
         * size, so it starts over at its full size; what it held is
         * dropped with the middle. */
        cr_assert(model_back(&m), "a shrunk ring gets its size back");
        cr_assert_eq(m.l.ring_size, 50);
        cr_assert_eq(output_layout_dropped(&m.l), 320 - 50);
        check_compacted(&m, 50, 0);
        model_write(&m, 200, 7);
        cr_assert_eq(m.ring_size, 50, "the ring grew back to its size");
        check_compacted(&m, 50, 50);
        model_done(&m);
}

Test(output_layout, space_back_before_the_shrunk_ring_wrapped_keeps_its_bytes) {
        Model m;
        model_init(&m, 100, 256);
        model_write(&m, 120, 7);
        uint64_t dropped = output_layout_dropped(&m.l);
        cr_assert(model_low(&m));
        cr_assert_eq(m.l.ring_size, 20);
        cr_assert(model_back(&m));
        cr_assert_eq(m.l.ring_size, 50, "grown in place");
        cr_assert_eq(output_layout_dropped(&m.l), dropped, "nothing dropped for it");
        check_compacted(&m, 50, 50);
        model_write(&m, 30, 7);
        check_compacted(&m, 50, 50);
        model_write(&m, 100, 9);
        check_compacted(&m, 50, 50);
        model_done(&m);
}

Test(output_layout, space_back_after_a_drop_gives_output_its_room_back) {
        /* Low before the cap: `output` holds more than the head, and the
         * tail goes on from it when space is back at once. */
        Model m;
        model_init(&m, 100, 256);
        model_write(&m, 70, 8);
        cr_assert(model_low(&m));
        cr_assert(model_back(&m));
        model_write(&m, 10, 3);
        cr_assert_eq(output_layout_dropped(&m.l), 0);
        check_compacted(&m, 50, 30);
        model_done(&m);
}

Test(output_layout, a_ring_that_can_take_no_more_ends_the_tail) {
        /* A full ring whose overwrite fails (copy-on-write, no room). */
        Model m;
        model_init(&m, 100, 256);
        model_write(&m, 200, 7);
        cr_assert_not(output_layout_needs_space(&m.l), "full");
        uint64_t gen = m.l.generation;
        cr_assert_not(model_end(&m), "`output` held only the head");
        cr_assert_gt(m.l.generation, gen);
        check_reads(&m);
        check_compacted(&m, 50, 0);
        uint8_t buf[OUTPUT_STATE_SIZE];
        OutputLayout d;
        output_state_encode(&m.l, 7, buf);
        cr_assert_eq(output_state_decode(buf, sizeof buf, &d, NULL), 0, "publishable");
        model_write(&m, 30, 7);
        cr_assert_eq(output_layout_dropped(&m.l), 180, "dropped until space is back");
        cr_assert(model_back(&m));
        model_write(&m, 30, 7);
        check_compacted(&m, 50, 30);

        /* Past the head, the tail still in `output`: its room goes back. */
        model_done(&m);
        model_init(&m, 100, 256);
        model_write(&m, 80, 8);
        cr_assert(model_low(&m));
        cr_assert(model_end(&m), "`output` is shortened to the head");
        cr_assert_eq(m.main_size, 50);
        check_reads(&m);
        check_compacted(&m, 50, 0);
        model_done(&m);
}

Test(output_layout, a_full_ring_needs_no_room) {
        Model m;
        model_init(&m, 10, 64);
        model_write(&m, 40, 3);
        cr_assert_not(output_layout_needs_space(&m.l));
        cr_assert_not(model_low(&m));
        model_done(&m);
}

Test(output_layout, random_writes_and_free_space_changes) {
        srand(42);
        for (int round = 0; round < 300; round++) {
                Model m;
                uint64_t cap = 1 + (uint64_t) (rand() % 40);
                model_init(&m, cap, 512);
                for (int i = 0; i < 12; i++) {
                        switch (rand() % 5) {
                        case 0: (void) model_low(&m); break;
                        case 1: (void) model_back(&m); break;
                        case 2: if (rand() % 3 == 0) (void) model_end(&m); break;
                        default: break;
                        }
                        model_write(&m, (uint64_t) (rand() % 30), 1 + (uint64_t) (rand() % 9));
                        uint8_t buf[OUTPUT_STATE_SIZE];
                        OutputLayout d;
                        output_state_encode(&m.l, 7, buf);
                        cr_assert_eq(output_state_decode(buf, sizeof buf, &d, NULL), 0, "round %d", round);
                }
                check_compacted(&m, m.l.head, output_layout_tail_length(&m.l));
                model_done(&m);
        }
}

/* --- the state file ------------------------------------------------------------ */

Test(output_layout, the_state_round_trips) {
        Model m;
        model_init(&m, 10, 64);
        model_write(&m, 23, 4);
        uint8_t buf[OUTPUT_STATE_SIZE];
        output_state_encode(&m.l, 123456, buf);
        OutputLayout d;
        uint64_t ino = 0;
        cr_assert_eq(output_state_decode(buf, sizeof buf, &d, &ino), 0);
        cr_assert_eq(ino, 123456);
        cr_assert_eq(d.phase, m.l.phase);
        cr_assert_eq(d.cap, m.l.cap);
        cr_assert_eq(d.total, m.l.total);
        cr_assert_eq(d.head, m.l.head);
        cr_assert_eq(d.tail_start, m.l.tail_start);
        cr_assert_eq(d.frozen, m.l.frozen);
        cr_assert_eq(d.ring_origin, m.l.ring_origin);
        cr_assert_eq(d.ring_size, m.l.ring_size);
        cr_assert_eq(d.generation, m.l.generation);
        model_done(&m);
}

Test(output_layout, a_torn_or_bad_state_is_refused) {
        Model m;
        model_init(&m, 10, 64);
        model_write(&m, 23, 4);
        uint8_t buf[OUTPUT_STATE_SIZE], bad[OUTPUT_STATE_SIZE];
        OutputLayout d;
        output_state_encode(&m.l, 1, buf);
        for (size_t i = 0; i < sizeof buf; i++) {
                memcpy(bad, buf, sizeof bad);
                bad[i] ^= 0x10;
                cr_assert_eq(output_state_decode(bad, sizeof bad, &d, NULL), -EBADMSG, "byte %zu flipped", i);
        }
        cr_assert_eq(output_state_decode(buf, sizeof buf - 1, &d, NULL), -EBADMSG, "short");
        memset(bad, 0, sizeof bad);
        cr_assert_eq(output_state_decode(bad, sizeof bad, &d, NULL), -EBADMSG, "zeros");

        /* Well formed, but a reader could not find its bytes. */
        OutputLayout l = m.l;
        l.tail_start = l.total + 1;
        output_state_encode(&l, 1, bad);
        cr_assert_eq(output_state_decode(bad, sizeof bad, &d, NULL), -EBADMSG, "tail past the end");
        l = m.l;
        l.ring_size = 0;
        output_state_encode(&l, 1, bad);
        cr_assert_eq(output_state_decode(bad, sizeof bad, &d, NULL), -EBADMSG, "a tail in no ring");
        l = m.l;
        l.phase = 9;
        output_state_encode(&l, 1, bad);
        cr_assert_eq(output_state_decode(bad, sizeof bad, &d, NULL), -EBADMSG, "no such phase");
        model_done(&m);
}
