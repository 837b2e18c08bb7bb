/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-service-units.c: unit tests of the daemon's parts that take input
 * from the kernel (ring reader, record decoding, stack building) and of its
 * tables (process maps, address set and its budget, sorting in slices, pinned files, thread names), with crafted and
 * hostile inputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "address-set.h"
#include "basic.h"
#include "capture.h"
#include "perf-events.h"
#include "perf-record.h"
#include "perf-spill.h"
#include "pinned-files.h"
#include "process-frames.h"
#include "process-maps.h"
#include "thread-table.h"
#include "sample-stack-choose.h"
#include "test-check.h"

/* ---- ring reader ---- */

typedef struct Seen {
        int n;
        uint32_t types[16];
        uint16_t sizes[16];
        uint64_t first_word[16];
} Seen;

static int collect(const struct perf_event_header *h, size_t size, void *userdata) {
        Seen *s = userdata;
        if (s->n < 16) {
                s->types[s->n] = h->type;
                s->sizes[s->n] = (uint16_t) size;
                memcpy(&s->first_word[s->n], (const uint8_t *) h + 8, 8);
        }
        s->n++;
        return 0;
}

/* Writes a record of `size` bytes at ring position pos (wrapping). */
static void put_record(uint8_t *ring, uint64_t ring_size, uint64_t pos, uint32_t type, uint16_t size, uint64_t word) {
        uint8_t rec[256] = {};
        struct perf_event_header h = { .type = type, .misc = 0, .size = size };
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + 8, &word, 8);
        for (uint16_t i = 0; i < size; i++)
                ring[(pos + i) & (ring_size - 1)] = rec[i];
}

/* A crafted ring with its reader's copy buffer, where the reader stopped
 * (tail), the records it dropped (bad) and what it handed over. */
typedef struct Ring {
        uint8_t data[256], copy[65536];
        uint64_t tail, bad;
        Seen seen;
} Ring;

static void ring_put(Ring *ring, uint64_t pos, uint32_t type, uint16_t size, uint64_t word) {
        put_record(ring->data, sizeof(ring->data), pos, type, size, word);
}

/* The reader over the ring up to head, as perf_events_drain sets one up. */
static int consume_ring(Ring *ring, uint64_t head) {
        PerfRingReader r = { .data = ring->data,
                             .data_size = sizeof(ring->data),
                             .head = head,
                             .tail = ring->tail,
                             .copy = ring->copy,
                             .bad_records = ring->bad };
        int n = perf_ring_consume(&r, collect, &ring->seen);
        ring->tail = r.tail;
        ring->bad = r.bad_records;
        return n;
}

TEST(ring_records) {
        Ring ring = {};
        ring_put(&ring, 0, PERF_RECORD_SAMPLE, 16, 111);
        ring_put(&ring, 16, PERF_RECORD_COMM, 32, 222);
        CHECK(consume_ring(&ring, 48) == 2);
        CHECK(ring.tail == 48 && ring.bad == 0 && ring.seen.types[1] == PERF_RECORD_COMM &&
              ring.seen.first_word[1] == 222);
}

/* A record that wraps around the end comes out contiguous. */
TEST(ring_wrapped_record) {
        Ring ring = { .tail = 240 };
        ring_put(&ring, 240, PERF_RECORD_MMAP2, 32, 0xabcdef);
        CHECK(consume_ring(&ring, 272) == 1);
        CHECK(ring.seen.sizes[0] == 32 && ring.seen.first_word[0] == 0xabcdef && ring.tail == 272 && ring.bad == 0);
}

/* Hostile headers are dropped and counted, and the reader moves on. */
TEST(ring_bad_records) {
        Ring ring = {};

        /* A header of size 0 would loop forever: dropped, counted. */
        ring_put(&ring, 0, PERF_RECORD_SAMPLE, 0, 1);
        CHECK(consume_ring(&ring, 64) == 0);
        CHECK(ring.bad == 1 && ring.tail == 64);

        /* A size beyond what the kernel published. */
        ring.tail = 0;
        ring_put(&ring, 0, PERF_RECORD_SAMPLE, 200, 1);
        CHECK(consume_ring(&ring, 64) == 0 && ring.bad == 2);

        /* A size that is not a multiple of 8. */
        ring.tail = 0;
        ring_put(&ring, 0, PERF_RECORD_SAMPLE, 12, 1);
        CHECK(consume_ring(&ring, 64) == 0 && ring.bad == 3);

        /* A head further ahead than the ring holds. */
        ring.tail = 0;
        CHECK(consume_ring(&ring, 4096) == 0 && ring.bad == 4);
        CHECK(ring.tail == 4096);
}

static uint64_t first_word_time(const struct perf_event_header *h, size_t size, void *userdata) {
        (void) userdata;
        uint64_t t = 0;
        if (size >= 16)
                memcpy(&t, (const uint8_t *) h + 8, 8);
        return t;
}

/* Two CPUs: an exec and an mmap on one, samples on the other. Handled ring
 * by ring, the samples at 20 and 40 would come before the mmap at 15 that
 * they need; merged, every record comes in time order, a wrapped record
 * included, and a ring that turns out bad ends alone. */
TEST(rings_merged_in_time_order) {
        uint8_t a[256] = {}, b[256] = {}, c[256] = {}, copy_a[65536], copy_b[65536], copy_c[65536];
        Seen s = {};

        put_record(a, sizeof(a), 0, PERF_RECORD_SAMPLE, 16, 20);
        put_record(a, sizeof(a), 16, PERF_RECORD_SAMPLE, 24, 40);
        put_record(a, sizeof(a), 40, PERF_RECORD_SAMPLE, 16, 60);
        put_record(b, sizeof(b), 232, PERF_RECORD_COMM, 16, 10);
        put_record(b, sizeof(b), 248, PERF_RECORD_MMAP2, 32, 15); /* wraps */
        put_record(b, sizeof(b), 280, PERF_RECORD_SAMPLE, 16, 40);
        put_record(c, sizeof(c), 0, PERF_RECORD_SAMPLE, 16, 30);
        put_record(c, sizeof(c), 16, PERF_RECORD_SAMPLE, 0, 0); /* broken */
        PerfRingReader r[3] = {
                { .data = a, .data_size = sizeof(a), .head = 56, .tail = 0, .copy = copy_a },
                { .data = b, .data_size = sizeof(b), .head = 296, .tail = 232, .copy = copy_b },
                { .data = c, .data_size = sizeof(c), .head = 48, .tail = 0, .copy = copy_c },
        };
        CHECK(perf_rings_merge(r, 3, first_word_time, NULL, collect, &s) == 7);
        static const uint64_t times[] = { 10, 15, 20, 30, 40, 40, 60 };
        static const uint32_t types[] = { PERF_RECORD_COMM, PERF_RECORD_MMAP2, PERF_RECORD_SAMPLE,
                                          PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE,
                                          PERF_RECORD_SAMPLE };
        CHECK(s.n == 7);
        for (int i = 0; i < 7 && i < s.n; i++)
                CHECK(s.first_word[i] == times[i] && s.types[i] == types[i]);
        CHECK(s.sizes[1] == 32);
        CHECK(s.sizes[4] == 24); /* equal times: the first ring's record first */
        CHECK(r[0].tail == 56 && r[1].tail == 296 && r[2].tail == 48);
        CHECK(r[0].bad_records == 0 && r[1].bad_records == 0 && r[2].bad_records == 1);
}

/* ---- record decoding ---- */

static const PerfRecordLayout layout = {
        .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN,
};

static size_t build_sample(uint64_t *buf, uint64_t nr, size_t real_ips) {
        size_t i = 1;
        buf[i++] = 0x401000;                     /* ip */
        buf[i++] = (uint64_t) 42 << 32 | 41;     /* pid 41, tid 42 */
        buf[i++] = 123456789;                    /* time */
        buf[i++] = 1;                            /* cpu 1 */
        buf[i++] = nr;
        buf[i++] = CAPTURE_CONTEXT_USER;
        for (size_t k = 1; k < real_ips; k++)
                buf[i++] = 0x401000 + k;
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER, .size = (uint16_t) (i * 8) };
        memcpy(buf, &h, sizeof(h));
        return i * 8;
}

TEST(parse_sample) {
        uint64_t buf[64];
        PerfSample s;
        size_t size = build_sample(buf, 4, 4);
        CHECK(perf_record_parse_sample(&layout, (void *) buf, size, &s) == 0);
        CHECK(s.pid == 41 && s.tid == 42 && s.cpu == 1 && s.time == 123456789 && s.n_callchain == 4 && s.user_mode);
        CHECK(s.callchain[0] == CAPTURE_CONTEXT_USER && s.callchain[3] == 0x401003);
        /* The time rings are merged by: from the sample, or 0 when cut short. */
        CHECK(perf_record_time(&layout, (void *) buf, size) == 123456789);
        CHECK(perf_record_time(&layout, (void *) buf, 8 + 16) == 0);
}

TEST(parse_sample_hostile) {
        uint64_t buf[64];
        PerfSample s;
        /* nr larger than the record: rejected, not read past the end. */
        size_t size = build_sample(buf, 1u << 30, 4);
        CHECK(perf_record_parse_sample(&layout, (void *) buf, size, &s) == -EBADMSG);
        size = build_sample(buf, UINT64_MAX / 4, 4);
        CHECK(perf_record_parse_sample(&layout, (void *) buf, size, &s) == -EBADMSG);

        /* Truncated before the callchain. */
        CHECK(perf_record_parse_sample(&layout, (void *) buf, 8 + 16, &s) == -EBADMSG);
}

/* Stack dump with dyn_size > size. */
TEST(parse_stack_dump) {
        PerfSample s;
        PerfRecordLayout l2 = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_STACK_USER };
        uint64_t st[8] = {};
        st[1] = 7;          /* pid/tid */
        st[2] = 16;         /* stack size */
        st[5] = 32;         /* dyn size > 16 */
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 48 };
        memcpy(st, &h, sizeof(h));
        CHECK(perf_record_parse_sample(&l2, (void *) st, 48, &s) == -EBADMSG);
        st[5] = 8;
        CHECK(perf_record_parse_sample(&l2, (void *) st, 48, &s) == 0 && s.stack_size == 16 && s.stack_dyn_size == 8);
}

/* MMAP2: the filename must be NUL-terminated inside the record. */
TEST(parse_mmap2) {
        uint8_t m[128];
        memset(m, 'A', sizeof(m));
        struct perf_event_header mh = { .type = PERF_RECORD_MMAP2, .size = 8 + 8 + 24 + 24 + 8 + 16 + 24 };
        memcpy(m, &mh, sizeof(mh));
        uint32_t pidtid[2] = { 5, 5 };
        uint64_t addr[3] = { 0x1000, 0x2000, 0 };
        memcpy(m + 8, pidtid, 8);
        memcpy(m + 16, addr, 24);
        memset(m + 40, 0, 24);
        uint32_t prot[2] = { 5, 2 };
        memcpy(m + 64, prot, 8);
        /* m + 72 .. +88: "AAAA…" without NUL, then the 24-byte sample_id */
        memset(m + 88, 0, 24);
        PerfMmap2 mm;
        CHECK(perf_record_parse_mmap2(&layout, (void *) m, mh.size, &mm) == -EBADMSG);
        memcpy(m + 72, "/bin/true\0\0\0\0\0\0", 16);
        CHECK(perf_record_parse_mmap2(&layout, (void *) m, mh.size, &mm) == 0);
        CHECK(strcmp(mm.filename, "/bin/true") == 0 && mm.addr == 0x1000 && mm.len == 0x2000 && !mm.has_build_id);
        /* Other records carry their time in the sample_id_all trailer. */
        uint64_t mmap_time = 987654321;
        memcpy(m + 96, &mmap_time, 8);
        CHECK(perf_record_time(&layout, (void *) m, mh.size) == 987654321);
        CHECK(perf_record_time(&layout, (void *) m, 16) == 0);
        /* A build-id longer than 20 bytes. */
        mh.misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
        memcpy(m, &mh, sizeof(mh));
        m[40] = 200;
        CHECK(perf_record_parse_mmap2(&layout, (void *) m, mh.size, &mm) == -EBADMSG);
        m[40] = 20;
        CHECK(perf_record_parse_mmap2(&layout, (void *) m, mh.size, &mm) == 0 && mm.has_build_id && mm.build_id_size == 20);
        /* addr + len wrapping around. */
        addr[0] = UINT64_MAX - 10;
        memcpy(m + 16, addr, 24);
        CHECK(perf_record_parse_mmap2(&layout, (void *) m, mh.size, &mm) == -EBADMSG);
}

TEST(parse_lost) {
        uint64_t lost_rec[3] = {};
        struct perf_event_header lh = { .type = PERF_RECORD_LOST, .size = 24 };
        memcpy(lost_rec, &lh, sizeof(lh));
        lost_rec[2] = 17;
        uint64_t lost = 0;
        CHECK(perf_record_parse_lost((void *) lost_rec, 24, &lost) == 0 && lost == 17);
        CHECK(perf_record_parse_lost((void *) lost_rec, 16, &lost) == -EBADMSG);
}

/* ---- spill ---- */

/* A SAMPLE with TID, REGS_USER (3 regs) and a stack copy of stack_size
 * bytes of which dyn are valid, filled with a pattern. Returns its size. */
static size_t build_stack_sample(uint64_t *buf, uint64_t stack_size, uint64_t dyn, uint32_t pid) {
        size_t n = 1;
        buf[n++] = (uint64_t) pid | ((uint64_t) pid << 32);
        buf[n++] = PERF_SAMPLE_REGS_ABI_64;
        buf[n++] = 0x1000;              /* bp */
        buf[n++] = 0x7ffc0000;          /* sp */
        buf[n++] = 0x401000;            /* ip */
        buf[n++] = stack_size;
        for (uint64_t i = 0; i < stack_size / 8; i++)
                buf[n++] = 0xab00000000000000ull | i;
        if (stack_size)
                buf[n++] = dyn;
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
                                       .size = (uint16_t) (n * 8) };
        memcpy(buf, &h, sizeof(h));
        return n * 8;
}

/* The samples of build_stack_sample(). */
static const PerfRecordLayout spill_layout = { .sample_type =
                                                       PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
                                               .sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8) };

typedef struct Replayed {
        int n, stop_at;
        PerfSample samples[8];
        uint64_t stacks[8][64];
        uint32_t types[8];
} Replayed;

static int replay_collect(const struct perf_event_header *h, size_t size, void *userdata) {
        Replayed *r = userdata;
        static const PerfRecordLayout l = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
                                                           PERF_SAMPLE_STACK_USER,
                                            .sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8) };
        if (r->n == r->stop_at)
                return -EAGAIN;
        if (r->n >= 8)
                return -E2BIG;
        r->types[r->n] = h->type;
        if (h->type == PERF_RECORD_SAMPLE) {
                if (perf_record_parse_sample(&l, h, size, &r->samples[r->n]) < 0)
                        return -EBADMSG;
                PerfSample *s = &r->samples[r->n];
                memcpy(r->stacks[r->n], s->stack ? s->stack : (const uint8_t *) "", s->stack_size);
                s->stack = NULL; /* the spill's buffer moves */
                s->regs = NULL;
                s->callchain = NULL;
        }
        r->n++;
        return 0;
}

TEST(spill_cut_and_replayed) {
        PerfSpill sp = { .layout = spill_layout };
        uint64_t buf[128];

        /* A stack copy is cut to its valid bytes (rounded to 8); the sample
         * reads back the same but for the invalid tail. */
        size_t size = build_stack_sample(buf, 256, 20, 7);
        CHECK(perf_spill_add((void *) buf, size, &sp) == 0);
        CHECK(sp.size == size - 256 + 24);
        /* nothing valid: no stack at all */
        size = build_stack_sample(buf, 256, 0, 8);
        CHECK(perf_spill_add((void *) buf, size, &sp) == 0);
        /* a non-sample record goes as it is */
        uint64_t lost_rec[3] = {};
        struct perf_event_header lh = { .type = PERF_RECORD_LOST, .size = 24 };
        memcpy(lost_rec, &lh, sizeof(lh));
        CHECK(perf_spill_add((void *) lost_rec, 24, &sp) == 0);
        /* a record whose size lies is refused */
        CHECK(perf_spill_add((void *) lost_rec, 16, &sp) == -EINVAL);
        CHECK(sp.spilled_records == 3);

        /* -EAGAIN keeps the record and the rest for the next replay. */
        Replayed r = { .stop_at = 1 };
        CHECK(perf_spill_replay(&sp, SIZE_MAX, replay_collect, &r) == 1);
        CHECK(r.n == 1 && r.samples[0].pid == 7 && r.samples[0].stack_size == 24 && r.samples[0].stack_dyn_size == 20);
        CHECK(r.stacks[0][0] == 0xab00000000000000ull && r.stacks[0][2] == 0xab00000000000002ull);
        CHECK(sp.size > 0);
        r.stop_at = -1;
        /* a slice of one record: the rest stays, in order */
        CHECK(perf_spill_replay(&sp, 1, replay_collect, &r) == 1);
        CHECK(r.n == 2 && r.samples[1].pid == 8 && sp.size > 0);
        CHECK(perf_spill_replay(&sp, SIZE_MAX, replay_collect, &r) == 1);
        CHECK(r.n == 3 && r.samples[1].pid == 8 && r.samples[1].stack_size == 0 && r.types[2] == PERF_RECORD_LOST);
        CHECK(sp.size == 0);
        perf_spill_done(&sp);
}

/* Bounded: past max_bytes samples are dropped and counted. */
TEST(spill_bounded) {
        PerfSpill sp = { .layout = spill_layout };
        uint64_t buf[128];
        size_t size = 0;
        sp.max_bytes = 4096;
        int dropped = 0;
        for (int i = 0; i < 100; i++) {
                size = build_stack_sample(buf, 512, 512, 9);
                CHECK(perf_spill_add((void *) buf, size, &sp) == 0);
        }
        dropped = (int) sp.dropped_samples;
        CHECK(sp.size <= 4096 && dropped > 90 && dropped + (int) (sp.size / size) == 100);
        perf_spill_done(&sp);
        CHECK(sp.size == 0 && sp.data == NULL && sp.max_bytes == 4096);
}

/* ---- stacks ---- */

TEST(stack_built) {
        uint64_t chain[] = { CAPTURE_CONTEXT_KERNEL, 0xffffffff81000000ull, 0xffffffff81000010ull,
                             CAPTURE_CONTEXT_USER, 0x401000, 0x401100, CAPTURE_CONTEXT_GUEST, 0x1234 };
        PerfSample s = { .n_callchain = 8, .callchain = chain, .ip = 0xffffffff81000000ull };
        uint64_t out[16];
        SampleStackContext with = { .kernel = true }, without = { .kernel = false };
        size_t n = sample_stack_build(&with, &s, out, 16);
        CHECK(n == 6 && out[0] == CAPTURE_CONTEXT_KERNEL && out[3] == CAPTURE_CONTEXT_USER && out[5] == 0x401100);
        n = sample_stack_build(&without, &s, out, 16);
        CHECK(n == 3 && out[0] == CAPTURE_CONTEXT_USER && out[1] == 0x401000);
        for (size_t i = 0; i < n; i++)
                CHECK(out[i] < 0x8000000000000000ull || out[i] == CAPTURE_CONTEXT_USER);
        /* Truncated to the room given, never ending on a marker. */
        n = sample_stack_build(&with, &s, out, 4);
        CHECK(n == 3 && !capture_address_is_context(out[n - 1]));
        /* No callchain: the ip alone, only if the part is allowed. */
        PerfSample k = { .ip = 0xffffffff81000000ull, .user_mode = false };
        CHECK(sample_stack_build(&without, &k, out, 16) == 0);
        PerfSample u = { .ip = 0x401000, .user_mode = true };
        CHECK(sample_stack_build(&without, &u, out, 16) == 2 && out[1] == 0x401000);
}

/* ---- tables ---- */

/* aarch64's PAC mask follows the process's highest code mapping. */
TEST(pac_mask) {
        ProcessMaps *m;
        CHECK(process_maps_new(&m) == 0);
        CHECK(sample_unwind_pac_mask(m, 10) == UNWIND_AARCH64_PAC_MASK_VA48);
        CHECK(sample_unwind_pac_mask(NULL, 10) == UNWIND_AARCH64_PAC_MASK_VA48);
        ProcessMapping low = { .start = 0xaaaa00000000, .end = 0xaaaa00010000, .inode = 7, .filename = "/a" };
        CHECK(process_maps_add(m, 10, &low) == 0);
        CHECK(sample_unwind_pac_mask(m, 10) == UNWIND_AARCH64_PAC_MASK_VA48);
        ProcessMapping high = { .start = 0x4000000000000ull, .end = 0x4000000010000ull, .inode = 8, .filename = "/b" };
        CHECK(process_maps_add(m, 11, &low) == 0);
        CHECK(process_maps_add(m, 11, &high) == 0);
        CHECK(sample_unwind_pac_mask(m, 11) == UNWIND_AARCH64_PAC_MASK_VA52);
        CHECK(sample_unwind_pac_mask(m, 10) == UNWIND_AARCH64_PAC_MASK_VA48);
        /* a signed return address of the 48-bit process loses its PAC only */
        CHECK((0x2baaaa00001234ull & ~UNWIND_AARCH64_PAC_MASK_VA48) == 0xaaaa00001234ull);
        process_maps_free(m);
}

/* Pid 10 maps /a at 0x1000-0x5000, then /b over 0x2000-0x3000. */
static ProcessMaps *maps_a_and_b(void) {
        ProcessMaps *m;
        MUST(process_maps_new(&m));
        ProcessMapping a = { .start = 0x1000, .end = 0x5000, .pgoff = 0, .inode = 7, .filename = "/a" };
        CHECK(process_maps_add(m, 10, &a) == 0);
        ProcessMapping b = { .start = 0x2000, .end = 0x3000, .pgoff = 0x100000, .inode = 8, .filename = "/b" };
        CHECK(process_maps_add(m, 10, &b) == 0);
        return m;
}

/* A mapping over another splits it; lookups find the right one. */
TEST(process_maps_split) {
        ProcessMaps *m = maps_a_and_b();
        size_t n;
        const ProcessMapping *all = process_maps_get(m, 10, &n);
        CHECK(n == 3);
        CHECK(all[0].end == 0x2000 && all[1].inode == 8 && all[2].start == 0x3000 && all[2].pgoff == 0x2000);
        CHECK(strcmp(process_maps_lookup(m, 10, 0x2fff)->filename, "/b") == 0);
        CHECK(strcmp(process_maps_lookup(m, 10, 0x4000)->filename, "/a") == 0);
        CHECK(process_maps_lookup(m, 10, 0x5000) == NULL && process_maps_lookup(m, 11, 0x2000) == NULL);
        ProcessMapping bad = { .start = 0x5000, .end = 0x5000, .filename = "/x" };
        CHECK(process_maps_add(m, 10, &bad) == -EINVAL);
        process_maps_free(m);
}

/* A fork copies the maps; an exec clears them and keeps the old image aside. */
TEST(process_maps_fork_and_exec) {
        ProcessMaps *m = maps_a_and_b();
        CHECK(process_maps_lookup(m, 11, 0x2000) == NULL);
        CHECK(process_maps_fork(m, 10, 11, 100) == 0);
        CHECK(process_maps_lookup(m, 11, 0x2000) && process_maps_lookup(m, 11, 0x2000)->inode == 8);
        CHECK(process_maps_exec(m, 10, 200) == 0);
        CHECK(process_maps_lookup(m, 10, 0x2000) == NULL && process_maps_lookup(m, 11, 0x2000) != NULL);
        /* ... but its old image is kept aside, for samples taken before. */
        size_t n_retired;
        const ProcessMapping *retired = process_maps_get_retired(m, 10, &n_retired);
        CHECK(n_retired == 3 && retired[1].inode == 8 && strcmp(retired[1].filename, "/b") == 0);
        CHECK(process_maps_get_retired(m, 11, &n_retired) == NULL || n_retired == 0);
        /* A sample from before the exec is unwound in the old image. */
        CHECK(process_maps_lookup_at(m, 10, 0x2000, 150) && process_maps_lookup_at(m, 10, 0x2000, 150)->inode == 8);
        CHECK(process_maps_lookup_at(m, 10, 0x2000, 250) == NULL);
        CHECK(process_maps_lookup_at(m, 10, 0x9000, 150) == NULL);
        process_maps_free(m);
}

/* Per-CPU rings deliver out of time order: the new image's mapping (t=300)
 * before the exec (t=250) survives it; the old image's (t=240) seen
 * afterwards is dropped; a late fork (t=150, of pid 10 that exec'd at 200)
 * does not overwrite a child that already exec'd. */
TEST(process_maps_out_of_order) {
        ProcessMaps *m = maps_a_and_b();
        CHECK(process_maps_exec(m, 10, 200) == 0);
        ProcessMapping fresh = { .start = 0x7000, .end = 0x8000, .inode = 9, .filename = "/new", .time = 300 };
        CHECK(process_maps_add(m, 12, &fresh) == 0);
        CHECK(process_maps_exec(m, 12, 250) == 0);
        CHECK(process_maps_lookup(m, 12, 0x7000) && process_maps_lookup(m, 12, 0x7000)->inode == 9);
        ProcessMapping stale = { .start = 0x9000, .end = 0xa000, .inode = 3, .filename = "/old", .time = 240 };
        CHECK(process_maps_add(m, 12, &stale) == 0);
        CHECK(process_maps_lookup(m, 12, 0x9000) == NULL);
        CHECK(process_maps_fork(m, 10, 12, 150) == 0);
        CHECK(process_maps_lookup(m, 12, 0x7000) && process_maps_lookup(m, 12, 0x2000) == NULL);
        process_maps_free(m);
}

/* Many processes and mappings stay sorted. */
TEST(process_maps_many_sorted) {
        ProcessMaps *m = maps_a_and_b();
        size_t n;
        for (int pid = 1000; pid > 100; pid -= 3)
                for (uint64_t k = 0; k < 20; k++) {
                        ProcessMapping x = { .start = (20 - k) * 0x10000, .end = (20 - k) * 0x10000 + 0x1000, .inode = k, .filename = "/m" };
                        CHECK(process_maps_add(m, pid, &x) == 0);
                }
        CHECK(process_maps_lookup(m, 103, 0x50800) && process_maps_lookup(m, 103, 0x50800)->inode == 15);
        const int32_t *pids = process_maps_get_pids(m, &n);
        for (size_t i = 1; i < n; i++)
                CHECK(pids[i - 1] < pids[i]);
        process_maps_free(m);
}

TEST(address_set) {
        AddressSet *s;
        CHECK(address_set_new(&s) == 0);
        CHECK(address_set_add(s, 1, 0x1000, false) == 1);
        CHECK(address_set_add(s, 1, 0x1000, true) == 0);
        CHECK(address_set_add(s, 1, 0x1000, false) == 0);
        CHECK(address_set_add(s, 2, 0x1000, false) == 1);
        CHECK(address_set_add(s, ADDRESS_SET_KERNEL_PID, 0xffffffff81000000ull, true) == 1);
        for (uint64_t i = 0; i < 100000; i++)
                CHECK(address_set_add(s, (int32_t) (i % 7), 0x400000 + i * 16, false) >= 0);
        size_t n;
        const AddressSetEntry *e = address_set_get_entries(s, &n);
        CHECK(n == 100003);
        CHECK(e[0].pid == 1 && e[0].address == 0x1000 && e[2].pid == ADDRESS_SET_KERNEL_PID);
        /* once a return address, always: the symbolizer names the call */
        CHECK(e[0].return_address && !e[1].return_address && e[2].return_address);
        CHECK(address_set_contains(s, 3, 0x400000 + 3 * 16) && !address_set_contains(s, 4, 0x400000 + 3 * 16));
        address_set_free(s);
}

/* The budget of distinct addresses: full is full, and what did not fit is counted. */
TEST(address_budget) {
        AddressSet *s;
        CHECK(address_set_new(&s) == 0);
        address_set_set_limit(s, 1000);
        for (uint64_t i = 0; i < 5000; i++)
                CHECK(address_set_add(s, 1, 0x400000 + i, true) >= 0);
        CHECK(address_set_add(s, 1, 0x400000, false) == 0); /* already in: not over */
        size_t n;
        (void) address_set_get_entries(s, &n);
        CHECK(n == 1000);
        CHECK(address_set_get_over_limit(s) == 4000);
        CHECK(address_set_contains(s, 1, 0x400000 + 999) && !address_set_contains(s, 1, 0x400000 + 1000));
        address_set_free(s);
}

static int compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static void count_yield(void *userdata) {
        (*(unsigned *) userdata)++;
}

/* sort_in_slices() sorts what qsort() sorts, giving way between slices. */
TEST(sort_in_slices) {
        size_t n = 10 * SORT_SLICE_ELEMENTS + 123;
        uint64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
        CHECK(v && w);
        if (!v || !w)
                return;
        uint64_t x = 0x9E3779B97F4A7C15ull;
        for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                v[i] = w[i] = x % 100000; /* duplicates too */
        }
        unsigned yields = 0;
        sort_in_slices(v, n, sizeof *v, compare_u64, count_yield, &yields);
        qsort(w, n, sizeof *w, compare_u64);
        CHECK(memcmp(v, w, n * sizeof *v) == 0);
        CHECK(yields >= 10); /* one per sorted run at least */
        unsigned none = 0;
        sort_in_slices(v, 5, sizeof *v, compare_u64, count_yield, &none);
        CHECK(none == 0); /* small arrays: one qsort */
        free(v);
        free(w);
}

TEST(pinned_files) {
        PinnedFiles *f;
        CHECK(pinned_files_new(16, &f) == 0);
        /* Our own executable's text, as a snapshot would see it. */
        FILE *maps = fopen("/proc/self/maps", "re");
        char line[512], path[256];
        unsigned long long start = 0, end = 0, ino = 0;
        unsigned maj = 0, min = 0;
        while (maps && fgets(line, sizeof(line), maps)) {
                char perms[8];
                unsigned long long off;
                if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %255s", &start, &end, perms, &off, &maj, &min, &ino, path) == 8 &&
                    perms[2] == 'x' && path[0] == '/')
                        break;
                ino = 0;
        }
        if (maps)
                fclose(maps);
        CHECK(ino != 0);
        PinnedFile *p = NULL, *q = NULL;
        CHECK(pinned_files_pin_mapping(f, getpid(), start, end, path, makedev(maj, min), ino, &p) == 0);
        CHECK(p && p->fd >= 0 && p->inode == ino && p->identity_checked);
        CHECK(pinned_files_pin_mapping(f, getpid(), start, end, path, makedev(maj, min), ino, &q) == 0 && q == p);
        CHECK(pinned_files_get_n(f) == 1);
        /* A path whose file is not the mapped one is refused (map_files is
         * tried first and does not match either). */
        CHECK(pinned_files_pin_mapping(f, getpid(), start, end, "/bin/sh", makedev(maj, min), ino + 1, &q) == -ESTALE);
        CHECK(pinned_files_pin_mapping(f, getpid(), 1, 2, "[vdso]", 0, 0, &q) == -ENOENT);
        CHECK(pinned_files_lookup(f, makedev(maj, min), ino) == p);
        pinned_files_free(f);
}

TEST(thread_names) {
        ThreadTable *t;
        CHECK(thread_table_new(&t) == 0);
        for (int32_t tid = 1000; tid > 0; tid -= 7) { /* inserted out of order */
                char name[32];
                snprintf(name, sizeof(name), "t%d", (int) tid);
                CHECK(thread_table_set(t, tid, name) == 0);
        }
        CHECK(thread_table_get(t, 6) && strcmp(thread_table_get(t, 6), "t6") == 0);
        CHECK(thread_table_get(t, 1000) && strcmp(thread_table_get(t, 1000), "t1000") == 0);
        CHECK(thread_table_get(t, 7) == NULL && thread_table_get(t, 2000) == NULL);
        CHECK(thread_table_set(t, 6, "a-much-longer-name-than-comm") == 0); /* a rename, cut as comm is */
        CHECK(strcmp(thread_table_get(t, 6), "a-much-longer-na") == 0);
        thread_table_remove(t, 6);
        thread_table_remove(t, 7); /* unknown: nothing */
        CHECK(thread_table_get(t, 6) == NULL && strcmp(thread_table_get(t, 13), "t13") == 0);
        thread_table_free(t);
}

/* FORK records: a new thread of a named creator gets its name, in a
 * thread-name frame at the fork's time; an unknown creator gives none; an
 * EXIT forgets the thread. */
TEST(thread_names_of_fork_records) {
        ThreadTable *t;
        CHECK(thread_table_new(&t) == 0);
        char path[] = "/tmp/test-thread-table-XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        CaptureWriter *w;
        CHECK(capture_writer_new_fd(fd, 1, &w) == 0);
        CHECK(thread_table_set(t, 5000, "worker-1") == 0);
        PerfTask fork_thread = { .pid = 4000, .ppid = 4000, .tid = 5001, .ptid = 5000, .time = 50 };
        CHECK(process_frames_write_thread_task(w, t, &fork_thread, true) == 0);
        CHECK(thread_table_get(t, 5001) && strcmp(thread_table_get(t, 5001), "worker-1") == 0);
        PerfTask orphan = { .pid = 4000, .ppid = 4000, .tid = 5002, .ptid = 4999, .time = 60 };
        CHECK(process_frames_write_thread_task(w, t, &orphan, true) == 0 && !thread_table_get(t, 5002));
        /* a task outside the service's pid namespace (pid and tid 0, as a
         * whole-system recording in a container sees the host's): no name,
         * no error that would end the recording */
        PerfTask outsider = { .pid = 0, .ppid = 0, .tid = 0, .ptid = 0, .time = 65 };
        CHECK(process_frames_write_thread_task(w, t, &outsider, true) == 0);
        PerfComm outside_comm = { .pid = 0, .tid = 0, .comm = "kworker/0:1" };
        CHECK(process_frames_write_thread_name(w, t, &outside_comm) == 0);
        PerfTask exit_thread = { .pid = 4000, .ppid = 4000, .tid = 5001, .ptid = 5001, .time = 70 };
        CHECK(process_frames_write_thread_task(w, t, &exit_thread, false) == 0 && !thread_table_get(t, 5001));
        CHECK(capture_writer_flush(w) == 0);
        capture_writer_free(w);
        close(fd);
        CaptureReader *r;
        CHECK(capture_reader_open_path(path, &r, NULL) == 0);
        CaptureFrame f;
        int names = 0;
        while (capture_reader_next(r, &f) > 0) {
                int32_t tid;
                const char *name;
                size_t len;
                bool exec;
                if (capture_frame_get_thread_name(&f, &tid, &name, &len, &exec) <= 0)
                        continue;
                names++;
                CHECK(f.pid == 4000 && f.time == 50 && tid == 5001 && len == 8 && memcmp(name, "worker-1", 8) == 0 &&
                      !exec);
        }
        CHECK(names == 1);
        capture_reader_free(r);
        unlink(path);
        thread_table_free(t);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
