/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-test-util.c: see capture-test-util.h. */
#include "capture-test-util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"

const uint64_t test_sample_addrs[TEST_N_SAMPLE_ADDRS] = {
        CAPTURE_CONTEXT_KERNEL, 0xffffffff81000010ull, 0xffffffff81000220ull, CAPTURE_CONTEXT_USER,
        0x401000ull,            0x401234ull,
};
const uint64_t test_alloc_addrs[TEST_N_ALLOC_ADDRS] = { 0x7f0000001000ull, 0x7f0000002000ull, 0x401234ull };

void test_write_all_types(CaptureWriter *w) {
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 1, 1, 100));
        CHECK_OK(capture_writer_add_sample(w, TEST_T0 + 2, 0, 100, 101, test_sample_addrs, ELEMENTSOF(test_sample_addrs)));
        CHECK_OK(capture_writer_add_map(w, TEST_T0 + 3, -1, 100, 0x400000, 0x402000, 0x1000, 12345, "/usr/bin/true"));
        CHECK_OK(capture_writer_add_process(w, TEST_T0 + 4, -1, 100, "/usr/bin/true --version"));
        CHECK_OK(capture_writer_add_fork(w, TEST_T0 + 5, 1, 100, 102));
        CHECK_OK(capture_writer_add_exit(w, TEST_T0 + 6, 1, 102));
        const CaptureJitmapEntry jit[] = {
                { CAPTURE_JITMAP_MARK | 1, "jit_alpha" },
                { CAPTURE_JITMAP_MARK | 2, "jit_beta_longer_name" },
        };
        CHECK_OK(capture_writer_add_jitmap(w, TEST_T0 + 7, -1, 100, jit, ELEMENTSOF(jit)));
        CaptureCounterDef defs[2] = {
                { .category = "CPU Percent", .name = "Total", .description = "Total CPU usage",
                  .id = 1, .type = CAPTURE_COUNTER_INT64, .value.v64 = 42 },
                { .category = "Memory", .name = "Used", .description = "Memory used by the system",
                  .id = 0x123456, .type = CAPTURE_COUNTER_DOUBLE, .value.vdbl = 1.5 },
        };
        CHECK_OK(capture_writer_add_counter_defs(w, TEST_T0 + 8, -1, -1, defs, ELEMENTSOF(defs)));
        CaptureCounterSetValue vals[9];
        for (int i = 0; i < 9; i++) {
                vals[i].id = (uint32_t) (i == 1 ? 0x123456 : i + 1);
                if (i == 1)
                        vals[i].value.vdbl = 2.25;
                else
                        vals[i].value.v64 = -1000 * i - 7;
        }
        CHECK_OK(capture_writer_add_counter_values(w, TEST_T0 + 9, -1, -1, vals, ELEMENTSOF(vals)));
        CHECK_OK(capture_writer_add_mark(w, TEST_T0 + 10, 0, 100, 5000, "gtk", "frame", "drawn 60 fps"));
        static const char meta[] = "lost_samples=3\nperiscope_version=0.1.0\n";
        CHECK_OK(capture_writer_add_metadata(w, TEST_T0 + 11, -1, -1, "periscope.stats", meta, strlen(meta)));
        CHECK_OK(capture_writer_add_log(w, TEST_T0 + 12, 0, 100, 16, "Gtk", "hello log"));
        CHECK_OK(capture_writer_add_file(w, TEST_T0 + 13, -1, -1, "/proc/cpuinfo", "cpu data\n", 9));
        CHECK_OK(capture_writer_add_allocation(w, TEST_T0 + 14, 1, 100, 101, 0xdead0000ull, 4096, test_alloc_addrs,
                                               ELEMENTSOF(test_alloc_addrs)));
        CHECK_OK(capture_writer_add_overlay(w, TEST_T0 + 15, -1, 100, 2,
                                            "/var/lib/containers/storage/overlay/abc/diff", "/"));
}

static void next_frame_full(CaptureReader *r, CaptureFrame *f, int type, int cpu, int32_t pid, bool check_header) {
        int k = capture_reader_next(r, f);
        if (k != 1)
                fprintf(stderr, "reading frame of type %d: %d %s\n", type, k, capture_reader_error(r) ?: "");
        CHECK(k == 1);
        if (f->type != type)
                fprintf(stderr, "frame at %llu is of type %d, expected %d\n", (unsigned long long) f->offset,
                        f->type, type);
        CHECK(f->type == type);
        if (check_header) {
                CHECK(f->time == TEST_T0 + type);
                CHECK(f->cpu == cpu);
                CHECK(f->pid == pid);
        }
        CHECK(f->len % 8 == 0);
}

static void next_frame(CaptureReader *r, CaptureFrame *f, int type, int cpu, int32_t pid) {
        next_frame_full(r, f, type, cpu, pid, true);
}

void test_check_all_types(CaptureReader *r) {
        test_check_all_types_full(r, 0);
}

void test_check_all_types_full(CaptureReader *r, unsigned flags) {
        CaptureFrame f;
        const CaptureFileHeader *h = capture_reader_get_header(r);
        CHECK(h->version == 1);
        if (!(flags & TEST_FROM_SYSPROF_WRITER))
                CHECK(h->start_time == TEST_T0);

        next_frame(r, &f, CAPTURE_FRAME_TIMESTAMP, 1, 100);
        CHECK(f.len == 24);

        next_frame(r, &f, CAPTURE_FRAME_SAMPLE, 0, 100);
        CHECK(f.sample.tid == 101);
        CHECK(f.sample.n_addrs == ELEMENTSOF(test_sample_addrs));
        CHECK(memcmp(f.sample.addrs, test_sample_addrs, sizeof(test_sample_addrs)) == 0);
        CHECK(capture_address_is_context(f.sample.addrs[0]));
        CHECK(!capture_address_is_context(f.sample.addrs[1]));

        next_frame(r, &f, CAPTURE_FRAME_MAP, -1, 100);
        CHECK(f.map.start == 0x400000 && f.map.end == 0x402000 && f.map.offset == 0x1000 && f.map.inode == 12345);
        CHECK_STR(f.map.filename, "/usr/bin/true");

        next_frame(r, &f, CAPTURE_FRAME_PROCESS, -1, 100);
        CHECK_STR(f.process.cmdline, "/usr/bin/true --version");

        next_frame(r, &f, CAPTURE_FRAME_FORK, 1, 100);
        CHECK(f.fork.child_pid == 102);

        next_frame(r, &f, CAPTURE_FRAME_EXIT, 1, 102);

        /* Sysprof's writer stamps JITMAP frames with its own time and pid */
        next_frame_full(r, &f, CAPTURE_FRAME_JITMAP, -1, 100, !(flags & TEST_FROM_SYSPROF_WRITER));
        CHECK(f.jitmap.n_entries == 2);
        CHECK(f.jitmap.entries[0].address == (CAPTURE_JITMAP_MARK | 1));
        CHECK_STR(f.jitmap.entries[0].name, "jit_alpha");
        CHECK(f.jitmap.entries[1].address == (CAPTURE_JITMAP_MARK | 2));
        CHECK_STR(f.jitmap.entries[1].name, "jit_beta_longer_name");

        next_frame(r, &f, CAPTURE_FRAME_CTRDEF, -1, -1);
        CHECK(f.ctrdef.n_counters == 2);
        CHECK_STR(f.ctrdef.counters[0].category, "CPU Percent");
        CHECK_STR(f.ctrdef.counters[0].name, "Total");
        CHECK_STR(f.ctrdef.counters[0].description, "Total CPU usage");
        CHECK(f.ctrdef.counters[0].id == 1);
        CHECK(f.ctrdef.counters[0].type == CAPTURE_COUNTER_INT64);
        CHECK(f.ctrdef.counters[0].value.v64 == 42);
        CHECK_STR(f.ctrdef.counters[1].category, "Memory");
        CHECK_STR(f.ctrdef.counters[1].name, "Used");
        CHECK_STR(f.ctrdef.counters[1].description, "Memory used by the system");
        CHECK(f.ctrdef.counters[1].id == 0x123456);
        CHECK(f.ctrdef.counters[1].type == CAPTURE_COUNTER_DOUBLE);
        CHECK(f.ctrdef.counters[1].value.vdbl == 1.5);

        next_frame(r, &f, CAPTURE_FRAME_CTRSET, -1, -1);
        CHECK(f.ctrset.n_groups == 2);
        CHECK(f.ctrset.n_values == 9);
        for (int i = 0; i < 9; i++) {
                if (i == 1) {
                        CHECK(f.ctrset.values[i].id == 0x123456);
                        CHECK(f.ctrset.values[i].value.vdbl == 2.25);
                } else {
                        CHECK(f.ctrset.values[i].id == (uint32_t) i + 1);
                        CHECK(f.ctrset.values[i].value.v64 == -1000 * i - 7);
                }
        }

        next_frame(r, &f, CAPTURE_FRAME_MARK, 0, 100);
        CHECK(f.mark.duration == 5000);
        CHECK_STR(f.mark.group, "gtk");
        CHECK_STR(f.mark.name, "frame");
        CHECK_STR(f.mark.message, "drawn 60 fps");

        next_frame(r, &f, CAPTURE_FRAME_METADATA, -1, -1);
        CHECK_STR(f.metadata.id, "periscope.stats");
        CHECK_STR(f.metadata.metadata, "lost_samples=3\nperiscope_version=0.1.0\n");

        next_frame(r, &f, CAPTURE_FRAME_LOG, 0, 100);
        CHECK(f.log.severity == 16);
        CHECK_STR(f.log.domain, "Gtk");
        CHECK_STR(f.log.message, "hello log");

        next_frame(r, &f, CAPTURE_FRAME_FILE_CHUNK, -1, -1);
        CHECK(f.file_chunk.is_last);
        CHECK(f.file_chunk.len == 9);
        CHECK_STR(f.file_chunk.path, "/proc/cpuinfo");
        CHECK(memcmp(f.file_chunk.data, "cpu data\n", 9) == 0);

        next_frame(r, &f, CAPTURE_FRAME_ALLOCATION, 1, 100);
        CHECK(f.allocation.alloc_addr == 0xdead0000ull);
        CHECK(f.allocation.alloc_size == 4096);
        CHECK(f.allocation.tid == 101);
        CHECK(f.allocation.n_addrs == ELEMENTSOF(test_alloc_addrs));
        CHECK(memcmp(f.allocation.addrs, test_alloc_addrs, sizeof(test_alloc_addrs)) == 0);

        next_frame(r, &f, CAPTURE_FRAME_OVERLAY, -1, 100);
        CHECK(f.overlay.layer == 2);
        CHECK_STR(f.overlay.src, "/var/lib/containers/storage/overlay/abc/diff");
        CHECK_STR(f.overlay.dst, "/");
}

/* A growing string buffer for test_describe_*. */
typedef struct Buf {
        char *s;
        size_t len, alloc;
} Buf;

__attribute__((format(printf, 2, 3))) static void bprintf(Buf *b, const char *fmt, ...) {
        va_list ap;
        for (;;) {
                va_start(ap, fmt);
                int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->alloc - b->len : 0, fmt, ap);
                va_end(ap);
                CHECK(n >= 0);
                if (b->s && b->len + (size_t) n < b->alloc) {
                        b->len += (size_t) n;
                        return;
                }
                b->alloc = (b->alloc + (size_t) n + 1) * 2;
                b->s = realloc(b->s, b->alloc);
                CHECK(b->s);
        }
}

static void describe(Buf *b, const CaptureFrame *f) {
        bprintf(b, "%s len=%u cpu=%d pid=%d time=%lld", capture_frame_type_to_string(f->type) ?: "?", f->len, f->cpu,
                f->pid, (long long) f->time);
        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE:
                bprintf(b, " tid=%d addrs=[", f->sample.tid);
                for (unsigned i = 0; i < f->sample.n_addrs; i++)
                        bprintf(b, "%s%llx", i ? " " : "", (unsigned long long) f->sample.addrs[i]);
                bprintf(b, "]");
                break;
        case CAPTURE_FRAME_MAP:
                bprintf(b, " %llx-%llx off=%llx inode=%llu file=%s", (unsigned long long) f->map.start,
                        (unsigned long long) f->map.end, (unsigned long long) f->map.offset,
                        (unsigned long long) f->map.inode, f->map.filename);
                break;
        case CAPTURE_FRAME_PROCESS:
                bprintf(b, " cmdline=%s", f->process.cmdline);
                break;
        case CAPTURE_FRAME_FORK:
                bprintf(b, " child=%d", f->fork.child_pid);
                break;
        case CAPTURE_FRAME_JITMAP:
                for (uint32_t i = 0; i < f->jitmap.n_entries; i++)
                        bprintf(b, " %llx=%s", (unsigned long long) f->jitmap.entries[i].address,
                                f->jitmap.entries[i].name);
                break;
        case CAPTURE_FRAME_CTRDEF:
                for (unsigned i = 0; i < f->ctrdef.n_counters; i++) {
                        const CaptureCounterDef *c = &f->ctrdef.counters[i];
                        bprintf(b, " [id=%u type=%u cat=%s name=%s desc=%s value=%llx]", c->id, c->type, c->category,
                                c->name, c->description, (unsigned long long) c->value.v64);
                }
                break;
        case CAPTURE_FRAME_CTRSET:
                bprintf(b, " groups=%u", f->ctrset.n_groups);
                for (uint32_t i = 0; i < f->ctrset.n_values; i++)
                        bprintf(b, " %u=%llx", f->ctrset.values[i].id,
                                (unsigned long long) f->ctrset.values[i].value.v64);
                break;
        case CAPTURE_FRAME_MARK:
                bprintf(b, " duration=%lld group=%s name=%s message=%s", (long long) f->mark.duration, f->mark.group,
                        f->mark.name, f->mark.message);
                break;
        case CAPTURE_FRAME_METADATA:
                bprintf(b, " id=%s metadata=%s", f->metadata.id, f->metadata.metadata);
                break;
        case CAPTURE_FRAME_LOG:
                bprintf(b, " severity=%u domain=%s message=%s", f->log.severity, f->log.domain, f->log.message);
                break;
        case CAPTURE_FRAME_FILE_CHUNK:
                bprintf(b, " path=%s last=%d len=%u data=", f->file_chunk.path, f->file_chunk.is_last,
                        f->file_chunk.len);
                for (unsigned i = 0; i < f->file_chunk.len; i++)
                        bprintf(b, "%02x", f->file_chunk.data[i]);
                break;
        case CAPTURE_FRAME_ALLOCATION:
                bprintf(b, " tid=%d addr=%llx size=%lld addrs=[", f->allocation.tid,
                        (unsigned long long) f->allocation.alloc_addr, (long long) f->allocation.alloc_size);
                for (unsigned i = 0; i < f->allocation.n_addrs; i++)
                        bprintf(b, "%s%llx", i ? " " : "", (unsigned long long) f->allocation.addrs[i]);
                bprintf(b, "]");
                break;
        case CAPTURE_FRAME_OVERLAY:
                bprintf(b, " layer=%u src=%s dst=%s", f->overlay.layer, f->overlay.src, f->overlay.dst);
                break;
        default:
                break;
        }
}

char *test_describe_frame(const CaptureFrame *f) {
        Buf b = { 0 };
        describe(&b, f);
        return b.s;
}

char *test_describe_all(CaptureReader *r) {
        Buf b = { 0 };
        CaptureFrame f;
        int k;
        bprintf(&b, "%s", "");
        while ((k = capture_reader_next(r, &f)) > 0) {
                describe(&b, &f);
                bprintf(&b, "\n");
        }
        if (k < 0)
                fprintf(stderr, "reader: %s\n", capture_reader_error(r) ?: "?");
        CHECK(k == 0);
        return b.s;
}

uint8_t *test_read_all(int fd, size_t *ret_len) {
        size_t alloc = 65536, len = 0;
        uint8_t *buf = malloc(alloc);
        CHECK(buf);
        off_t off = 0;
        for (;;) {
                if (len == alloc) {
                        alloc *= 2;
                        buf = realloc(buf, alloc);
                        CHECK(buf);
                }
                ssize_t k = pread(fd, buf + len, alloc - len, off);
                CHECK(k >= 0);
                if (k == 0)
                        break;
                len += (size_t) k;
                off += k;
        }
        *ret_len = len;
        return buf;
}

uint8_t *test_capture_bytes(void (*add)(CaptureWriter *w), bool big_endian, size_t *ret_len) {
        _cleanup_close_ int fd = test_memfd("capture");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        add(w);
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);
        uint8_t *buf = test_read_all(fd, ret_len);
        if (big_endian)
                test_swap_to_big_endian(buf, *ret_len);
        return buf;
}

static void swap_n(uint8_t *p, size_t n) {
        for (size_t i = 0; i < n / 2; i++) {
                uint8_t t = p[i];
                p[i] = p[n - 1 - i];
                p[n - 1 - i] = t;
        }
}

void test_swap_to_big_endian(uint8_t *buf, size_t size) {
        CHECK(size >= CAPTURE_FILE_HEADER_SIZE);
        /* magic stays little-endian; version:8 is byte 4 either way; the
         * little_endian:1 bit (bit 0 of byte 5 on LE, bit 7 on BE) becomes 0. */
        CHECK(buf[5] == 0x01);
        buf[5] = 0;
        swap_n(buf + 72, 8);
        swap_n(buf + 80, 8);

        size_t pos = CAPTURE_FILE_HEADER_SIZE;
        while (pos < size) {
                CHECK(size - pos >= CAPTURE_FRAME_HEADER_SIZE);
                uint8_t *f = buf + pos;
                size_t len = (size_t) (f[0] | f[1] << 8);
                CHECK(len >= CAPTURE_FRAME_HEADER_SIZE && len <= size - pos);
                uint8_t type = f[16]; /* type:8 is the first byte of its u32 on either host */
                swap_n(f, 2);
                swap_n(f + 2, 2);
                swap_n(f + 4, 4);
                swap_n(f + 8, 8);
                switch (type) {
                case CAPTURE_FRAME_SAMPLE: {
                        size_t n = (size_t) (f[24] | f[25] << 8);
                        swap_n(f + 24, 2); /* n_addrs:16 = high half of a big-endian u32 = bytes 24-25 */
                        swap_n(f + 28, 4);
                        for (size_t i = 0; i < n; i++)
                                swap_n(f + 32 + 8 * i, 8);
                        break;
                }
                case CAPTURE_FRAME_MAP:
                        for (int i = 0; i < 4; i++)
                                swap_n(f + 24 + 8 * i, 8);
                        break;
                case CAPTURE_FRAME_FORK:
                        swap_n(f + 24, 4);
                        break;
                case CAPTURE_FRAME_JITMAP: {
                        uint32_t n = (uint32_t) (f[24] | f[25] << 8 | f[26] << 16 | (uint32_t) f[27] << 24);
                        swap_n(f + 24, 4);
                        size_t p = CAPTURE_JITMAP_SIZE;
                        for (uint32_t i = 0; i < n; i++) {
                                swap_n(f + p, 8);
                                p += 8 + strlen((char *) f + p + 8) + 1;
                                CHECK(p <= len);
                        }
                        break;
                }
                case CAPTURE_FRAME_CTRDEF: {
                        size_t n = (size_t) (f[24] | f[25] << 8);
                        swap_n(f + 24, 2);
                        for (size_t i = 0; i < n; i++) {
                                uint8_t *c = f + CAPTURE_CTRDEF_SIZE + CAPTURE_COUNTER_SIZE * i;
                                /* id:24 then type:8: on BE the id is bytes 116-118
                                 * most significant first, type stays byte 119. */
                                swap_n(c + 116, 3);
                                swap_n(c + 120, 8);
                        }
                        break;
                }
                case CAPTURE_FRAME_CTRSET: {
                        size_t n = (size_t) (f[24] | f[25] << 8);
                        swap_n(f + 24, 2);
                        for (size_t g = 0; g < n; g++) {
                                uint8_t *grp = f + CAPTURE_CTRSET_SIZE + CAPTURE_CTRSET_GROUP_SIZE * g;
                                for (int i = 0; i < 8; i++) {
                                        swap_n(grp + 4 * i, 4);
                                        swap_n(grp + 32 + 8 * i, 8);
                                }
                        }
                        break;
                }
                case CAPTURE_FRAME_MARK:
                        swap_n(f + 24, 8);
                        break;
                case CAPTURE_FRAME_LOG:
                        swap_n(f + 24, 2);
                        break;
                case CAPTURE_FRAME_FILE_CHUNK: {
                        /* is_last:1 padding:15 len:16 — LE: is_last is bit 0,
                         * len the top half; BE: is_last is bit 31, len the low half. */
                        uint32_t v = (uint32_t) (f[24] | f[25] << 8 | f[26] << 16 | (uint32_t) f[27] << 24);
                        uint32_t be = (v & 1) << 31 | (v >> 16);
                        f[24] = (uint8_t) (be >> 24);
                        f[25] = (uint8_t) (be >> 16);
                        f[26] = (uint8_t) (be >> 8);
                        f[27] = (uint8_t) be;
                        break;
                }
                case CAPTURE_FRAME_ALLOCATION: {
                        size_t n = (size_t) (f[44] | f[45] << 8);
                        swap_n(f + 24, 8);
                        swap_n(f + 32, 8);
                        swap_n(f + 40, 4);
                        swap_n(f + 44, 2);
                        for (size_t i = 0; i < n; i++)
                                swap_n(f + 48 + 8 * i, 8);
                        break;
                }
                case CAPTURE_FRAME_OVERLAY:
                        swap_n(f + 28, 2);
                        swap_n(f + 30, 2);
                        break;
                default:
                        break;
                }
                pos += len;
        }
}

int test_memfd(const char *name) {
        int fd = memfd_create(name, MFD_CLOEXEC);
        CHECK(fd >= 0);
        return fd;
}

CaptureFrame test_metadata_frame(const char *id, const char *text) {
        CaptureFrame f = { .type = CAPTURE_FRAME_METADATA };
        snprintf(f.metadata.id, sizeof(f.metadata.id), "%s", id);
        f.metadata.metadata = text;
        return f;
}

size_t test_count_accepted(int (*parse)(const char *id, const char *text), const char *id, const char *const *texts,
                           size_t n) {
        size_t accepted = 0;
        for (size_t i = 0; i < n; i++)
                if (parse(id, texts[i]) != -EBADMSG) {
                        fprintf(stderr, "accepted: %s\n", texts[i]);
                        accepted++;
                }
        return accepted;
}

void test_check_file(CaptureReader *r, const char *path, const uint8_t *want, size_t len) {
        uint8_t *got;
        size_t got_len;
        CHECK_OK(capture_reader_read_file(r, path, UINT64_MAX, &got, &got_len));
        CHECK(got_len == len && memcmp(got, want, len) == 0);
        free(got);
}
