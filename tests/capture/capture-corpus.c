/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-corpus.c: hand-broken captures (see capture-corpus.h). Each case
 * starts from a valid capture made by our writer and breaks one thing. */
#include "capture-corpus.h"

#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "capture-test-util.h"

#define FRAME0 CAPTURE_FILE_HEADER_SIZE /* offset of the first frame */

typedef void (*AddFrames)(CaptureWriter *w);

static uint8_t *build(AddFrames add, size_t *ret_len) {
        return test_capture_bytes(add, false, ret_len);
}

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static uint16_t get16(const uint8_t *p) {
        return (uint16_t) (p[0] | p[1] << 8);
}

static const uint64_t addrs3[] = { CAPTURE_CONTEXT_USER, 0x401000, 0x401010 };

static void add_timestamp_sample(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 1, 0, 1));
        CHECK_OK(capture_writer_add_sample(w, TEST_T0 + 2, 0, 1, 1, addrs3, 3));
}
static void add_sample(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_sample(w, TEST_T0 + 2, 0, 1, 1, addrs3, 3));
}
static void add_allocation(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_allocation(w, TEST_T0, 0, 1, 1, 0x1000, 64, addrs3, 3));
}
static void add_map(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_map(w, TEST_T0, 0, 1, 0x400000, 0x401000, 0, 5, "/usr/bin/x"));
}
static void add_process(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_process(w, TEST_T0, 0, 1, "/bin/sh -c x"));
}
static void add_ctrdef(CaptureWriter *w) {
        CaptureCounterDef d = { .category = "c", .name = "n", .description = "d", .id = 1 };
        CHECK_OK(capture_writer_add_counter_defs(w, TEST_T0, 0, 1, &d, 1));
}
static void add_ctrset(CaptureWriter *w) {
        CaptureCounterSetValue v = { .id = 1, .value.v64 = 3 };
        CHECK_OK(capture_writer_add_counter_values(w, TEST_T0, 0, 1, &v, 1));
}
static void add_jitmap(CaptureWriter *w) {
        CaptureJitmapEntry e[2] = { { CAPTURE_JITMAP_MARK | 1, "jitted_fn" }, { CAPTURE_JITMAP_MARK | 2, "g" } };
        CHECK_OK(capture_writer_add_jitmap(w, TEST_T0, 0, 1, e, 2));
}
static void add_mark(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_mark(w, TEST_T0, 0, 1, 10, "grp", "name", "a message"));
}
static void add_log(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_log(w, TEST_T0, 0, 1, 4, "dom", "log message"));
}
static void add_metadata(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_metadata(w, TEST_T0, 0, 1, "id", "k=v", 3));
}
static void add_overlay(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_overlay(w, TEST_T0, 0, 1, 1, "/lower", "/"));
}
static void add_file(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_file(w, TEST_T0, 0, 1, "/etc/hostname", "host\n", 5));
}
static void add_all(CaptureWriter *w) {
        test_write_all_types(w);
}

/* Fills [from, frame end) of the frame at FRAME0 with 'A': no terminator. */
static void unterminate(uint8_t *buf, size_t from) {
        size_t len = get16(buf + FRAME0);
        memset(buf + FRAME0 + from, 'A', len - from);
}

#define EXPECT(...) CHECK(asprintf(&c->expected, __VA_ARGS__) >= 0)

static bool make_case(size_t i, CorpusCase *c) {
        size_t len = 0;
        uint8_t *b = NULL;
        memset(c, 0, sizeof(*c));
        switch (i) {
        case 0:
                c->name = "truncated-header";
                b = build(add_timestamp_sample, &len);
                len = 100;
                EXPECT("file is 100 bytes, shorter than the 256-byte capture header");
                break;
        case 1:
                c->name = "empty";
                b = build(add_timestamp_sample, &len);
                len = 0;
                EXPECT("file is 0 bytes, shorter than the 256-byte capture header");
                break;
        case 2:
                c->name = "bad-magic";
                b = build(add_timestamp_sample, &len);
                put32(b, 0x12345678);
                EXPECT("offset 0: not a Sysprof capture (bad magic 0x12345678)");
                break;
        case 3:
                c->name = "wrong-version";
                b = build(add_timestamp_sample, &len);
                b[4] = 2;
                EXPECT("offset 4: capture format version 2, only version 1 is supported");
                break;
        case 4:
                c->name = "truncated-frame-header";
                b = build(add_timestamp_sample, &len);
                len = FRAME0 + 24 + 10;
                EXPECT("offset 280: truncated frame header (10 of 24 bytes)");
                break;
        case 5:
                c->name = "truncated-frame";
                b = build(add_timestamp_sample, &len);
                len -= 20; /* the 56-byte SAMPLE at 280 loses its end */
                EXPECT("offset 280: frame length 56 runs past the end of the file (36 bytes left)");
                break;
        case 6:
                c->name = "length-short";
                b = build(add_timestamp_sample, &len);
                put16(b + FRAME0, 16);
                EXPECT("offset 256: frame length 16 is shorter than a frame header");
                break;
        case 7:
                c->name = "length-zero";
                b = build(add_timestamp_sample, &len);
                put16(b + FRAME0 + 24, 0);
                EXPECT("offset 280: frame length 0 is shorter than a frame header");
                break;
        case 8:
                c->name = "length-past-eof";
                b = build(add_timestamp_sample, &len);
                put16(b + FRAME0 + 24, 65000);
                EXPECT("offset 280: frame length 65000 runs past the end of the file (56 bytes left)");
                break;
        case 9:
                c->name = "sample-n-addrs-past-frame";
                b = build(add_sample, &len);
                put16(b + FRAME0 + 24, 4);
                EXPECT("offset 256: SAMPLE frame: 4 addresses need 32 bytes, the frame has 24");
                break;
        case 10:
                c->name = "sample-n-addrs-max";
                b = build(add_sample, &len);
                put16(b + FRAME0 + 24, 0xffff);
                EXPECT("offset 256: SAMPLE frame: 65535 addresses need 524280 bytes, the frame has 24");
                break;
        case 11:
                c->name = "allocation-n-addrs-past-frame";
                b = build(add_allocation, &len);
                put16(b + FRAME0 + 44, 9);
                EXPECT("offset 256: ALLOCATION frame: 9 addresses need 72 bytes, the frame has 24");
                break;
        case 12:
                c->name = "sample-shorter-than-layout";
                b = build(add_timestamp_sample, &len);
                b[FRAME0 + 16] = CAPTURE_FRAME_SAMPLE; /* a 24-byte TIMESTAMP relabelled SAMPLE */
                EXPECT("offset 256: SAMPLE frame of 24 bytes is shorter than its 32-byte layout");
                break;
        case 13:
                c->name = "ctrdef-count-past-frame";
                b = build(add_ctrdef, &len);
                put16(b + FRAME0 + 24, 2);
                EXPECT("offset 256: CTRDEF frame: 2 counters need 256 bytes, the frame has 128");
                break;
        case 14:
                c->name = "ctrset-count-past-frame";
                b = build(add_ctrset, &len);
                put16(b + FRAME0 + 24, 500);
                EXPECT("offset 256: CTRSET frame: 500 value groups need 48000 bytes, the frame has 96");
                break;
        case 15:
                c->name = "jitmap-count-huge";
                b = build(add_jitmap, &len);
                put32(b + FRAME0 + 24, 0xffffffffu);
                EXPECT("offset 256: JITMAP frame: 4294967295 entries cannot fit in 28 bytes");
                break;
        case 16:
                c->name = "jitmap-count-past-entries";
                b = build(add_jitmap, &len);
                put32(b + FRAME0 + 24, 3); /* fits the 9-byte bound, but there are only 2 */
                EXPECT("offset 256: JITMAP frame: entry 2 runs past the frame");
                break;
        case 17:
                c->name = "jitmap-name-unterminated";
                b = build(add_jitmap, &len);
                unterminate(b, CAPTURE_JITMAP_SIZE + 8);
                EXPECT("offset 256: JITMAP frame: entry 0 name has no terminator");
                break;
        case 18:
                c->name = "map-unterminated";
                b = build(add_map, &len);
                unterminate(b, CAPTURE_MAP_SIZE);
                EXPECT("offset 256: MAP frame: file name has no terminator");
                break;
        case 19:
                c->name = "process-unterminated";
                b = build(add_process, &len);
                unterminate(b, CAPTURE_FRAME_HEADER_SIZE);
                EXPECT("offset 256: PROCESS frame: command line has no terminator");
                break;
        case 20:
                c->name = "mark-unterminated";
                b = build(add_mark, &len);
                unterminate(b, CAPTURE_MARK_SIZE);
                EXPECT("offset 256: MARK frame: message has no terminator");
                break;
        case 21:
                c->name = "log-unterminated";
                b = build(add_log, &len);
                unterminate(b, CAPTURE_LOG_SIZE);
                EXPECT("offset 256: LOG frame: message has no terminator");
                break;
        case 22:
                c->name = "metadata-unterminated";
                b = build(add_metadata, &len);
                unterminate(b, CAPTURE_METADATA_SIZE);
                EXPECT("offset 256: METADATA frame: metadata has no terminator");
                break;
        case 23:
                c->name = "overlay-unterminated";
                b = build(add_overlay, &len);
                unterminate(b, CAPTURE_OVERLAY_SIZE);
                EXPECT("offset 256: OVERLAY frame: paths are not terminated where their lengths say");
                break;
        case 24:
                c->name = "overlay-lengths-past-frame";
                b = build(add_overlay, &len);
                put16(b + FRAME0 + 28, 1000);
                EXPECT("offset 256: OVERLAY frame: paths of 1000 and 1 bytes do not fit");
                break;
        case 25:
                c->name = "file-chunk-len-past-frame";
                b = build(add_file, &len);
                put32(b + FRAME0 + 24, 1u | 200u << 16);
                EXPECT("offset 256: FILE_CHUNK frame: chunk of 200 bytes, the frame holds 12");
                break;
        case 26:
                c->name = "map-shorter-than-layout";
                b = build(add_map, &len);
                put16(b + FRAME0, 48);
                /* the frame now ends inside the MAP layout; a 24-byte EXIT fills the rest */
                put16(b + FRAME0 + 48, 24);
                b[FRAME0 + 48 + 16] = CAPTURE_FRAME_EXIT;
                len = FRAME0 + 72;
                EXPECT("offset 256: MAP frame of 48 bytes is shorter than its 57-byte layout");
                break;
        case 27: {
                c->name = "big-endian-sample-n-addrs-past-frame";
                b = build(add_sample, &len);
                test_swap_to_big_endian(b, len);
                b[FRAME0 + 24] = 0x01; /* big-endian n_addrs 0x0100 = 256 */
                b[FRAME0 + 25] = 0x00;
                EXPECT("offset 256: SAMPLE frame: 256 addresses need 2048 bytes, the frame has 24");
                break;
        }
        case 28:
                c->name = "error-after-valid-frames";
                b = build(add_all, &len);
                len -= 3;
                EXPECT("offset 1792: frame length 80 runs past the end of the file (77 bytes left)");
                break;
        default:
                return false;
        }
        c->data = b;
        c->len = len;
        return true;
}

size_t corpus_n_cases(void) {
        size_t n = 0;
        CorpusCase c;
        while (make_case(n, &c)) {
                corpus_case_clear(&c);
                n++;
        }
        return n;
}

bool corpus_get_case(size_t i, CorpusCase *ret) {
        return make_case(i, ret);
}

void corpus_case_clear(CorpusCase *c) {
        free(c->data);
        free(c->expected);
        c->data = NULL;
        c->expected = NULL;
}
