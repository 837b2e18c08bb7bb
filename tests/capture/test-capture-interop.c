/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-capture-interop: our capture format against Debian's real
 * libsysprof-capture-4 (Sysprof 3.46):
 *  (a) a capture of every frame type written by our writer is read by
 *      sysprof_capture_reader_* with the same frames and contents;
 *  (b) a capture of every frame type written by sysprof_capture_writer_* is
 *      read by our reader with the same frames and contents.
 * "Same" is checked twice: field by field against the known values, and by
 * comparing a complete text form of every frame from both readers.
 * `test-capture-interop --compare FILE` runs that comparison on any capture. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <sysprof-capture.h>

#include "basic.h"
#include "capture-test-util.h"

/* Decodes every frame with Sysprof's reader into our CaptureFrame view and
 * describes it with test_describe_frame(), so both readers can be compared. */
static char *sysprof_describe_all(const char *path, unsigned *ret_frames) {
        SysprofCaptureReader *r = sysprof_capture_reader_new(path);
        if (!r)
                fprintf(stderr, "sysprof_capture_reader_new(%s): %s\n", path, strerror(errno));
        CHECK(r);
        size_t alloc = 1 << 16, len = 0;
        char *out = calloc(1, alloc);
        CHECK(out);
        unsigned frames = 0;
        SysprofCaptureFrameType type;
        while (sysprof_capture_reader_peek_type(r, &type)) {
                SysprofCaptureFrame hdr;
                CHECK(sysprof_capture_reader_peek_frame(r, &hdr));
                CaptureFrame f = {
                        .len = hdr.len, .type = (uint8_t) type, .cpu = hdr.cpu, .pid = hdr.pid, .time = hdr.time,
                };
                static CaptureJitmapEntry jit[8192];     /* a 64 KiB frame holds at most 7278 */
                static CaptureCounterDef defs[512];      /* … at most 511 counters */
                static CaptureCounterSetValue vals[5456]; /* … at most 682 groups of 8 */
                switch (type) {
                case SYSPROF_CAPTURE_FRAME_TIMESTAMP:
                        CHECK(sysprof_capture_reader_read_timestamp(r));
                        break;
                case SYSPROF_CAPTURE_FRAME_EXIT:
                        CHECK(sysprof_capture_reader_read_exit(r));
                        break;
                case SYSPROF_CAPTURE_FRAME_SAMPLE: {
                        const SysprofCaptureSample *s = sysprof_capture_reader_read_sample(r);
                        CHECK(s);
                        f.sample.tid = s->tid;
                        f.sample.n_addrs = (uint16_t) s->n_addrs;
                        f.sample.addrs = s->addrs;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_MAP: {
                        const SysprofCaptureMap *m = sysprof_capture_reader_read_map(r);
                        CHECK(m);
                        f.map.start = m->start;
                        f.map.end = m->end;
                        f.map.offset = m->offset;
                        f.map.inode = m->inode;
                        f.map.filename = m->filename;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_PROCESS: {
                        const SysprofCaptureProcess *p = sysprof_capture_reader_read_process(r);
                        CHECK(p);
                        f.process.cmdline = p->cmdline;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_FORK: {
                        const SysprofCaptureFork *k = sysprof_capture_reader_read_fork(r);
                        CHECK(k);
                        f.fork.child_pid = k->child_pid;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_JITMAP: {
                        const SysprofCaptureJitmap *j = sysprof_capture_reader_read_jitmap(r);
                        CHECK(j);
                        SysprofCaptureJitmapIter it;
                        sysprof_capture_jitmap_iter_init(&it, j);
                        SysprofCaptureAddress addr;
                        const char *name;
                        uint32_t n = 0;
                        while (sysprof_capture_jitmap_iter_next(&it, &addr, &name)) {
                                CHECK(n < ELEMENTSOF(jit));
                                jit[n].address = addr;
                                jit[n].name = name;
                                n++;
                        }
                        CHECK(n == j->n_jitmaps);
                        f.jitmap.n_entries = n;
                        f.jitmap.entries = jit;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_CTRDEF: {
                        const SysprofCaptureCounterDefine *d = sysprof_capture_reader_read_counter_define(r);
                        CHECK(d);
                        CHECK(d->n_counters <= ELEMENTSOF(defs));
                        for (unsigned i = 0; i < d->n_counters; i++) {
                                const SysprofCaptureCounter *c = &d->counters[i];
                                memset(&defs[i], 0, sizeof(defs[i]));
                                memcpy(defs[i].category, c->category, strnlen(c->category, 32));
                                memcpy(defs[i].name, c->name, strnlen(c->name, 32));
                                memcpy(defs[i].description, c->description, strnlen(c->description, 52));
                                defs[i].id = c->id;
                                defs[i].type = (uint8_t) c->type;
                                defs[i].value.v64 = c->value.v64;
                        }
                        f.ctrdef.n_counters = (uint16_t) d->n_counters;
                        f.ctrdef.counters = defs;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_CTRSET: {
                        const SysprofCaptureCounterSet *s = sysprof_capture_reader_read_counter_set(r);
                        CHECK(s);
                        uint32_t n = 0;
                        for (unsigned g = 0; g < s->n_values; g++)
                                for (int i = 0; i < 8; i++) {
                                        if (s->values[g].ids[i] == 0)
                                                continue;
                                        CHECK(n < ELEMENTSOF(vals));
                                        vals[n].id = s->values[g].ids[i];
                                        vals[n].value.v64 = s->values[g].values[i].v64;
                                        n++;
                                }
                        f.ctrset.n_groups = (uint16_t) s->n_values;
                        f.ctrset.n_values = n;
                        f.ctrset.values = vals;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_MARK: {
                        const SysprofCaptureMark *m = sysprof_capture_reader_read_mark(r);
                        CHECK(m);
                        f.mark.duration = m->duration;
                        memcpy(f.mark.group, m->group, strnlen(m->group, 24));
                        memcpy(f.mark.name, m->name, strnlen(m->name, 40));
                        f.mark.message = m->message;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_METADATA: {
                        const SysprofCaptureMetadata *m = sysprof_capture_reader_read_metadata(r);
                        CHECK(m);
                        memcpy(f.metadata.id, m->id, strnlen(m->id, 40));
                        f.metadata.metadata = m->metadata;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_LOG: {
                        const SysprofCaptureLog *l = sysprof_capture_reader_read_log(r);
                        CHECK(l);
                        f.log.severity = (uint16_t) l->severity;
                        memcpy(f.log.domain, l->domain, strnlen(l->domain, 32));
                        f.log.message = l->message;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_FILE_CHUNK: {
                        const SysprofCaptureFileChunk *c = sysprof_capture_reader_read_file(r);
                        CHECK(c);
                        f.file_chunk.is_last = c->is_last;
                        f.file_chunk.len = (uint16_t) c->len;
                        memcpy(f.file_chunk.path, c->path, strnlen(c->path, 256));
                        f.file_chunk.data = c->data;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_ALLOCATION: {
                        const SysprofCaptureAllocation *a = sysprof_capture_reader_read_allocation(r);
                        CHECK(a);
                        f.allocation.alloc_addr = a->alloc_addr;
                        f.allocation.alloc_size = a->alloc_size;
                        f.allocation.tid = a->tid;
                        f.allocation.n_addrs = (uint16_t) a->n_addrs;
                        f.allocation.addrs = a->addrs;
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_OVERLAY: {
                        const SysprofCaptureOverlay *o = sysprof_capture_reader_read_overlay(r);
                        CHECK(o);
                        f.overlay.layer = (uint8_t) o->layer;
                        f.overlay.src = o->data;
                        f.overlay.dst = o->data + o->src_len + 1;
                        break;
                }
                default:
                        fprintf(stderr, "Sysprof reader: unexpected frame type %d\n", type);
                        exit(1);
                }
                _cleanup_free_ char *d = test_describe_frame(&f);
                size_t dl = strlen(d);
                while (len + dl + 2 > alloc) {
                        alloc *= 2;
                        out = realloc(out, alloc);
                        CHECK(out);
                }
                memcpy(out + len, d, dl);
                out[len + dl] = '\n';
                len += dl + 1;
                out[len] = 0;
                frames++;
        }
        sysprof_capture_reader_unref(r);
        *ret_frames = frames;
        return out;
}

static char *our_describe_all(const char *path) {
        CaptureReader *r;
        _cleanup_free_ char *err = NULL;
        if (capture_reader_open_path(path, &r, &err) < 0) {
                fprintf(stderr, "%s\n", err ?: "open failed");
                exit(1);
        }
        char *d = test_describe_all(r);
        capture_reader_free(r);
        return d;
}

static void sysprof_write_all_types(SysprofCaptureWriter *w) {
        CHECK(sysprof_capture_writer_add_timestamp(w, TEST_T0 + 1, 1, 100));
        CHECK(sysprof_capture_writer_add_sample(w, TEST_T0 + 2, 0, 100, 101, test_sample_addrs, TEST_N_SAMPLE_ADDRS));
        CHECK(sysprof_capture_writer_add_map(w, TEST_T0 + 3, -1, 100, 0x400000, 0x402000, 0x1000, 12345,
                                             "/usr/bin/true"));
        CHECK(sysprof_capture_writer_add_process(w, TEST_T0 + 4, -1, 100, "/usr/bin/true --version"));
        CHECK(sysprof_capture_writer_add_fork(w, TEST_T0 + 5, 1, 100, 102));
        CHECK(sysprof_capture_writer_add_exit(w, TEST_T0 + 6, 1, 102));
        /* Sysprof numbers JIT addresses itself (MARK|1, MARK|2, …) and writes
         * the JITMAP frame ahead of its buffered frames when it flushes:
         * flush before and after to keep the reference order. */
        CHECK(sysprof_capture_writer_flush(w));
        CHECK(sysprof_capture_writer_add_jitmap(w, "jit_alpha") == (CAPTURE_JITMAP_MARK | 1));
        CHECK(sysprof_capture_writer_add_jitmap(w, "jit_beta_longer_name") == (CAPTURE_JITMAP_MARK | 2));
        CHECK(sysprof_capture_writer_flush(w));
        /* Sysprof hands out counter ids; reserve 1..0x123456 so both ids are valid */
        CHECK(sysprof_capture_writer_request_counter(w, 0x123456) == 1);
        SysprofCaptureCounter defs[2];
        memset(defs, 0, sizeof(defs));
        strcpy(defs[0].category, "CPU Percent");
        strcpy(defs[0].name, "Total");
        strcpy(defs[0].description, "Total CPU usage");
        defs[0].id = 1;
        defs[0].type = SYSPROF_CAPTURE_COUNTER_INT64;
        defs[0].value.v64 = 42;
        strcpy(defs[1].category, "Memory");
        strcpy(defs[1].name, "Used");
        strcpy(defs[1].description, "Memory used by the system");
        defs[1].id = 0x123456;
        defs[1].type = SYSPROF_CAPTURE_COUNTER_DOUBLE;
        defs[1].value.vdbl = 1.5;
        CHECK(sysprof_capture_writer_define_counters(w, TEST_T0 + 8, -1, -1, defs, 2));
        unsigned ids[9];
        SysprofCaptureCounterValue vals[9];
        for (int i = 0; i < 9; i++) {
                ids[i] = i == 1 ? 0x123456 : (unsigned) i + 1;
                if (i == 1)
                        vals[i].vdbl = 2.25;
                else
                        vals[i].v64 = -1000 * i - 7;
        }
        CHECK(sysprof_capture_writer_set_counters(w, TEST_T0 + 9, -1, -1, ids, vals, 9));
        CHECK(sysprof_capture_writer_add_mark(w, TEST_T0 + 10, 0, 100, 5000, "gtk", "frame", "drawn 60 fps"));
        CHECK(sysprof_capture_writer_add_metadata(w, TEST_T0 + 11, -1, -1, "periscope.stats",
                                                  "lost_samples=3\nperiscope_version=0.1.0\n", -1));
        CHECK(sysprof_capture_writer_add_log(w, TEST_T0 + 12, 0, 100, 16, "Gtk", "hello log"));
        CHECK(sysprof_capture_writer_add_file(w, TEST_T0 + 13, -1, -1, "/proc/cpuinfo", true,
                                              (const uint8_t *) "cpu data\n", 9));
        CHECK(sysprof_capture_writer_add_allocation_copy(w, TEST_T0 + 14, 1, 100, 101, 0xdead0000ull, 4096,
                                                         test_alloc_addrs, TEST_N_ALLOC_ADDRS));
        CHECK(sysprof_capture_writer_add_overlay(w, TEST_T0 + 15, -1, 100, 2,
                                                 "/var/lib/containers/storage/overlay/abc/diff", "/"));
}

/* The two captures of the cases, written once in a directory of the run's
 * own: ours (every frame type and a 150000-byte file, by our writer) and
 * Sysprof's (the same by libsysprof-capture-4's writer). */
static char tmp_dir[] = "/tmp/capture-interop-XXXXXX";
static bool tmp_made;
static char *ours_path, *sysprof_path;
static uint8_t ours_blob[150000], sysprof_blob[150000];

static const char *dir(void) {
        if (!tmp_made) {
                CHECK(mkdtemp(tmp_dir));
                tmp_made = true;
        }
        return tmp_dir;
}

static const char *ours_capture(void) {
        if (ours_path)
                return ours_path;
        CHECK(asprintf(&ours_path, "%s/ours.syscap", dir()) >= 0);
        _cleanup_close_ int fd = open(ours_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        test_write_all_types(w);
        /* a file spanning several chunks, as Sysprof's find_file/read_file_fd must reassemble */
        for (size_t i = 0; i < sizeof(ours_blob); i++)
                ours_blob[i] = (uint8_t) (i * 7 + i / 251);
        CHECK_OK(capture_writer_add_file(w, TEST_T0 + 16, -1, -1, "/blob", ours_blob, sizeof(ours_blob)));
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);
        return ours_path;
}

static const char *sysprof_capture(void) {
        if (sysprof_path)
                return sysprof_path;
        CHECK(asprintf(&sysprof_path, "%s/sysprof.syscap", dir()) >= 0);
        SysprofCaptureWriter *w = sysprof_capture_writer_new(sysprof_path, 0);
        CHECK(w);
        sysprof_write_all_types(w);
        /* and a multi-chunk file through Sysprof's own chunking */
        _cleanup_close_ int src = test_memfd("src");
        for (size_t i = 0; i < sizeof(sysprof_blob); i++)
                sysprof_blob[i] = (uint8_t) (i * 13 + i / 509);
        CHECK(write(src, sysprof_blob, sizeof(sysprof_blob)) == (ssize_t) sizeof(sysprof_blob));
        CHECK(lseek(src, 0, SEEK_SET) == 0);
        CHECK(sysprof_capture_writer_add_file_fd(w, TEST_T0 + 16, -1, -1, "/blob", src));
        CHECK(sysprof_capture_writer_flush(w));
        sysprof_capture_writer_unref(w);
        return sysprof_path;
}

static CaptureReader *our_reader(const char *path) {
        CaptureReader *r;
        _cleanup_free_ char *err = NULL;
        if (capture_reader_open_path(path, &r, &err) < 0) {
                fprintf(stderr, "%s\n", err ?: "?");
                exit(1);
        }
        return r;
}

/* Above, CHECK is capture-test-util.h's: a step the cases need stops the
 * run (test-check.h's hook names the case). The cases count theirs. */
#undef CHECK
#include "test-check.h"

/* Both readers give the same text of every frame of path. */
static void expect_same_from_both_readers(const char *path, unsigned want_frames) {
        unsigned frames;
        _cleanup_free_ char *theirs = sysprof_describe_all(path, &frames);
        _cleanup_free_ char *ours = our_describe_all(path);
        CHECK_MSG(want_frames == 0 || frames == want_frames, "%s: %u frames, want %u", path, frames, want_frames);
        CHECK_MSG(strcmp(theirs, ours) == 0, "--- Sysprof's reader:\n%s--- ours:\n%s", theirs, ours);
        printf("  %u frames, identical from both readers\n", frames);
}

TEST(ours_times_read_by_sysprof) {
        SysprofCaptureReader *sr = sysprof_capture_reader_new(ours_capture());
        MUST(sr ? 0 : -EBADMSG);
        CHECK(sysprof_capture_reader_get_start_time(sr) == TEST_T0);
        CHECK(sysprof_capture_reader_get_end_time(sr) == TEST_T0 + 16);
        sysprof_capture_reader_unref(sr);
}

TEST(ours_file_reassembled_by_sysprof) {
        SysprofCaptureReader *sr = sysprof_capture_reader_new(ours_capture());
        MUST(sr ? 0 : -EBADMSG);
        _cleanup_close_ int out = test_memfd("blob");
        CHECK(sysprof_capture_reader_read_file_fd(sr, "/blob", out));
        size_t got_len;
        _cleanup_free_ uint8_t *got = test_read_all(out, &got_len);
        CHECK(got_len == sizeof(ours_blob) && memcmp(got, ours_blob, sizeof(ours_blob)) == 0);
        sysprof_capture_reader_unref(sr);
}

TEST(ours_same_frames_from_both_readers) {
        expect_same_from_both_readers(ours_capture(), 15 + 3);
}

TEST(sysprof_frames_read_by_ours) {
        CaptureReader *r = our_reader(sysprof_capture());
        CHECK(capture_reader_get_header(r)->little_endian);
        test_check_all_types_full(r, TEST_FROM_SYSPROF_WRITER);
        CaptureFrame f;
        unsigned chunks = 0;
        int k;
        while ((k = capture_reader_next(r, &f)) > 0) {
                CHECK(f.type == CAPTURE_FRAME_FILE_CHUNK);
                CHECK_STR(f.file_chunk.path, "/blob");
                chunks++;
        }
        CHECK(k == 0);
        CHECK(chunks >= 2);
        CHECK(capture_reader_get_skipped(r) == 0);
        capture_reader_free(r);
}

TEST(sysprof_file_chunks_reassembled_by_ours) {
        CaptureReader *r = our_reader(sysprof_capture());
        test_check_file(r, "/blob", sysprof_blob, sizeof(sysprof_blob));
        capture_reader_free(r);
}

TEST(sysprof_same_frames_from_both_readers) {
        expect_same_from_both_readers(sysprof_capture(), 0);
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "--compare") == 0) {
                /* any capture (e.g. one recorded by sysprof-cli): both readers see the same frames */
                unsigned frames;
                _cleanup_free_ char *theirs = sysprof_describe_all(argv[2], &frames);
                _cleanup_free_ char *ours = our_describe_all(argv[2]);
                if (strcmp(theirs, ours) != 0) {
                        fprintf(stderr, "%s: libsysprof-capture-4 and our reader disagree\n", argv[2]);
                        return 1;
                }
                printf("%u frames, identical from both readers\n", frames);
                return 0;
        }
        int r = test_main(argc, argv);
        if (ours_path)
                unlink(ours_path);
        if (sysprof_path)
                unlink(sysprof_path);
        if (tmp_made)
                rmdir(tmp_dir);
        free(ours_path);
        free(sysprof_path);
        return r;
}
