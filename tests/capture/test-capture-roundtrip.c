/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-capture-roundtrip.c: what the writer writes, the reader gives back:
 * every frame type with exact contents, embedded files of any size, the end
 * time rewritten on flush, pipes, the frame size limit, big-endian captures
 * and unknown frame types. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-check.h"

#include "basic.h"
#include "capture-test-util.h"

static CaptureReader *open_fd_checked(int fd) {
        CaptureReader *r = NULL;
        _cleanup_free_ char *err = NULL;
        int k = capture_reader_open_fd(fd, &r, &err);
        if (k < 0) {
                fprintf(stderr, "FAIL: open: %s\n", err ?: "?");
                exit(1);
        }
        return r;
}

TEST(all_frame_types_round_trip) {
        _cleanup_close_ int fd = test_memfd("all-types");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        test_write_all_types(w);
        for (int t = 1; t <= 15; t++)
                CHECK(capture_writer_get_frame_count(w, t) == 1);
        CHECK_OK(capture_writer_flush(w));
        CHECK(capture_writer_get_bytes(w) == (uint64_t) lseek(fd, 0, SEEK_END));
        capture_writer_free(w);

        CaptureReader *r = open_fd_checked(fd);
        const CaptureFileHeader *h = capture_reader_get_header(r);
        CHECK(h->little_endian);
        CHECK(h->end_time == TEST_T0 + 15);
        CHECK(strlen(h->capture_time) == 20); /* 2026-01-01T00:00:00Z */
        CaptureFrame f;
        test_check_all_types(r);
        CHECK(capture_reader_next(r, &f) == 0);
        CHECK(capture_reader_get_skipped(r) == 0);

        /* rewind gives the same frames again */
        capture_reader_rewind(r);
        test_check_all_types(r);
        CHECK(capture_reader_next(r, &f) == 0);
        capture_reader_free(r);
}

static void fill_pattern(uint8_t *p, size_t n, unsigned seed) {
        uint32_t x = seed * 2654435761u + 1;
        for (size_t i = 0; i < n; i++) {
                x = x * 1103515245u + 12345u;
                p[i] = (uint8_t) (x >> 16);
        }
}

TEST(files_of_any_size_come_back_whole) {
        const size_t sizes[] = { 0, 1, CAPTURE_FILE_CHUNK_MAX_DATA - 1, CAPTURE_FILE_CHUNK_MAX_DATA,
                                 CAPTURE_FILE_CHUNK_MAX_DATA + 1, 2 * CAPTURE_FILE_CHUNK_MAX_DATA,
                                 (1u << 20) + 3 };
        const size_t n = ELEMENTSOF(sizes);
        _cleanup_close_ int fd = test_memfd("files");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        uint8_t *data[ELEMENTSOF(sizes)];
        for (size_t i = 0; i < n; i++) {
                data[i] = malloc(sizes[i] + 1);
                MUST(data[i] ? 0 : -ENOMEM);
                fill_pattern(data[i], sizes[i], (unsigned) i);
                char path[64];
                snprintf(path, sizeof(path), "/files/buffer-%zu", sizes[i]);
                CHECK_OK(capture_writer_add_file(w, TEST_T0 + 1, -1, -1, path, data[i], sizes[i]));
                /* interleave other frames to show chunks need not be adjacent */
                CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 2, 0, 1));

                /* the same bytes through add_file_fd */
                _cleanup_close_ int src = test_memfd("src");
                CHECK(write(src, data[i], sizes[i]) == (ssize_t) sizes[i]);
                CHECK(lseek(src, 0, SEEK_SET) == 0);
                snprintf(path, sizeof(path), "/files/fd-%zu", sizes[i]);
                CHECK_OK(capture_writer_add_file_fd(w, TEST_T0 + 3, -1, -1, path, src, UINT64_MAX));
        }
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);

        CaptureReader *r = open_fd_checked(fd);
        for (size_t i = 0; i < n; i++) {
                for (int via_fd = 0; via_fd < 2; via_fd++) {
                        char path[64];
                        snprintf(path, sizeof(path), via_fd ? "/files/fd-%zu" : "/files/buffer-%zu", sizes[i]);
                        _cleanup_free_ uint8_t *got = NULL;
                        size_t got_len = 12345;
                        int k = capture_reader_read_file(r, path, UINT64_MAX, &got, &got_len);
                        if (k < 0)
                                fprintf(stderr, "%s: %d %s\n", path, k, capture_reader_error(r) ?: "");
                        CHECK(k == 0);
                        CHECK(got_len == sizes[i]);
                        CHECK(memcmp(got, data[i], sizes[i]) == 0);
                        CHECK(got[got_len] == 0);
                }
        }
        /* chunk count and is_last: only the last chunk of each file has it */
        CaptureFrame f;
        size_t chunks = 0, lasts = 0;
        while (capture_reader_next(r, &f) > 0)
                if (f.type == CAPTURE_FRAME_FILE_CHUNK && strncmp(f.file_chunk.path, "/files/buffer-", 14) == 0) {
                        chunks++;
                        lasts += f.file_chunk.is_last;
                        CHECK(f.file_chunk.len <= CAPTURE_FILE_CHUNK_MAX_DATA);
                }
        size_t want = 0;
        for (size_t i = 0; i < n; i++)
                want += sizes[i] == 0 ? 1 : (sizes[i] + CAPTURE_FILE_CHUNK_MAX_DATA - 1) / CAPTURE_FILE_CHUNK_MAX_DATA;
        CHECK(chunks == want);
        CHECK(lasts == n);

        uint8_t *got;
        size_t got_len;
        CHECK(capture_reader_read_file(r, "/files/absent", UINT64_MAX, &got, &got_len) == -ENOENT);
        CHECK(capture_reader_read_file(r, "/files/buffer-1048579", 1u << 20, &got, &got_len) == -EFBIG);
        capture_reader_free(r);
        for (size_t i = 0; i < n; i++)
                free(data[i]);
}

TEST(add_file_fd_stops_at_max_bytes) {
        _cleanup_close_ int fd = test_memfd("files");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        uint8_t data[5000];
        fill_pattern(data, sizeof(data), 6);
        _cleanup_close_ int src = test_memfd("src");
        CHECK(write(src, data, 5000) == 5000);
        CHECK(lseek(src, 0, SEEK_SET) == 0);
        CHECK(capture_writer_add_file_fd(w, 0, -1, -1, "/files/too-big", src, 4999) == -EFBIG);
        capture_writer_free(w);
}

static int64_t header_end_time(int fd) {
        uint8_t t[8];
        CHECK(pread(fd, t, 8, 80) == 8);
        int64_t v = 0;
        for (int i = 7; i >= 0; i--)
                v = v << 8 | t[i];
        return v;
}

TEST(end_time_rewritten_on_flush) {
        _cleanup_close_ int fd = test_memfd("end-time");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        CHECK(header_end_time(fd) == TEST_T0);
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 500, 0, 1));
        CHECK(header_end_time(fd) == TEST_T0); /* nothing flushed yet */
        CHECK_OK(capture_writer_flush(w));
        CHECK(header_end_time(fd) == TEST_T0 + 500);
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 900, 0, 1));
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 700, 0, 1)); /* older: end stays at the latest */
        CHECK_OK(capture_writer_flush(w));
        CHECK(header_end_time(fd) == TEST_T0 + 900);
        capture_writer_set_end_time(w, TEST_T0 + 5000);
        CHECK_OK(capture_writer_flush(w));
        CHECK(header_end_time(fd) == TEST_T0 + 5000);

        /* readable up to the last flush while the writer still has frames buffered */
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 6000, 0, 1));
        CaptureReader *r = open_fd_checked(fd);
        CHECK(capture_reader_get_header(r)->end_time == TEST_T0 + 5000);
        CaptureFrame f;
        int frames = 0;
        while (capture_reader_next(r, &f) > 0)
                frames++;
        CHECK(frames == 3);
        capture_reader_free(r);
        capture_writer_free(w);
}

TEST(append_fd_not_rewritten_in_place) {
        /* an O_APPEND fd is not rewritten in place (pwrite would append) */
        CaptureWriter *w;
        CaptureReader *r;
        CaptureFrame f;
        char tmpl[] = "/tmp/capture-append-XXXXXX";
        _cleanup_close_ int tfd = mkstemp(tmpl);
        MUST(tfd < 0 ? -errno : 0);
        unlink(tmpl);
        char procpath[64];
        snprintf(procpath, sizeof(procpath), "/proc/self/fd/%d", tfd);
        _cleanup_close_ int app = open(procpath, O_WRONLY | O_APPEND | O_CLOEXEC);
        MUST(app < 0 ? -errno : 0);
        CHECK_OK(capture_writer_new_fd(app, TEST_T0, &w));
        CHECK_OK(capture_writer_add_timestamp(w, TEST_T0 + 10, 0, 1));
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);
        CHECK(lseek(tfd, 0, SEEK_END) == CAPTURE_FILE_HEADER_SIZE + 24);
        r = open_fd_checked(tfd);
        CHECK(capture_reader_next(r, &f) == 1 && f.time == TEST_T0 + 10);
        CHECK(capture_reader_next(r, &f) == 0);
        capture_reader_free(r);
}

TEST(writer_to_a_pipe) {
        int p[2];
        MUST(pipe2(p, O_CLOEXEC) < 0 ? -errno : 0);
        pid_t pid = fork();
        MUST(pid < 0 ? -errno : 0);
        if (pid == 0) {
                close(p[0]);
                CaptureWriter *w;
                if (capture_writer_new_fd(p[1], TEST_T0, &w) < 0)
                        _exit(10);
                close(p[1]);
                test_write_all_types(w);
                /* 1 MiB of file data: several flushes through a 64 KiB pipe */
                uint8_t *big = calloc(1, 1u << 20);
                if (!big || capture_writer_add_file(w, TEST_T0 + 16, -1, -1, "/big", big, 1u << 20) < 0 ||
                    capture_writer_flush(w) < 0)
                        _exit(11);
                free(big);
                capture_writer_free(w);
                _exit(0);
        }
        close(p[1]);
        CaptureReader *r = open_fd_checked(p[0]);
        close(p[0]);
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* not seekable: the header keeps the start time as end time */
        CHECK(capture_reader_get_header(r)->end_time == TEST_T0);
        uint8_t *got;
        size_t got_len;
        CHECK_OK(capture_reader_read_file(r, "/big", UINT64_MAX, &got, &got_len));
        CHECK(got_len == 1u << 20);
        free(got);
        capture_reader_rewind(r);
        /* The reference frames come first, then the file chunks. */
        CaptureFrame f;
        for (int t = 1; t <= 15; t++) {
                CHECK(capture_reader_next(r, &f) == 1);
                CHECK(f.type == t);
        }
        capture_reader_free(r);
}

TEST(frame_size_limit_enforced) {
        _cleanup_close_ int fd = test_memfd("limit");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));

        /* a MAP frame of exactly 65528 bytes (56 + name + NUL) fits; one byte more does not */
        size_t fit = CAPTURE_FRAME_MAX - CAPTURE_MAP_SIZE - 1;
        char *name = malloc(fit + 2);
        MUST(name ? 0 : -ENOMEM);
        memset(name, 'a', fit);
        name[fit] = 0;
        CHECK(capture_writer_add_map(w, 1, 0, 1, 0, 1, 0, 0, name) == 0);
        name[fit] = 'b';
        name[fit + 1] = 0;
        CHECK(capture_writer_add_map(w, 1, 0, 1, 0, 1, 0, 0, name) == -EINVAL);

        /* longer than any frame */
        char *huge = malloc(70001);
        MUST(huge ? 0 : -ENOMEM);
        memset(huge, 'h', 70000);
        huge[70000] = 0;

        uint64_t *addrs = calloc(CAPTURE_SAMPLE_MAX_ADDRS + 1, sizeof(uint64_t));
        MUST(addrs ? 0 : -ENOMEM);
        CHECK(capture_writer_add_sample(w, 1, 0, 1, 1, addrs, CAPTURE_SAMPLE_MAX_ADDRS) == 0);
        CHECK(capture_writer_add_sample(w, 1, 0, 1, 1, addrs, CAPTURE_SAMPLE_MAX_ADDRS + 1) == -EINVAL);
        CHECK(capture_writer_add_allocation(w, 1, 0, 1, 1, 0, 0, addrs, CAPTURE_ALLOCATION_MAX_ADDRS + 1) == -EINVAL);
        CHECK(capture_writer_add_process(w, 1, 0, 1, huge) == -EINVAL);
        CHECK(capture_writer_add_log(w, 1, 0, 1, 0, "d", huge) == -EINVAL);
        CHECK(capture_writer_add_mark(w, 1, 0, 1, 0, "g", "n", huge) == -EINVAL);
        CHECK(capture_writer_add_metadata(w, 1, 0, 1, "id", huge, strlen(huge)) == -EINVAL);
        CHECK(capture_writer_add_metadata(w, 1, 0, 1, "id", "x", SIZE_MAX) == -EINVAL);
        CHECK(capture_writer_add_overlay(w, 1, 0, 1, 0, huge, "/") == -EINVAL);
        CHECK(capture_writer_add_file_chunk(w, 1, 0, 1, "/f", true, (const uint8_t *) name,
                                            CAPTURE_FILE_CHUNK_MAX_DATA + 1) == -EINVAL);
        CaptureJitmapEntry jit[2] = { { 1, huge }, { 2, "x" } };
        CHECK(capture_writer_add_jitmap(w, 1, 0, 1, jit, 2) == -EINVAL);
        CHECK(capture_writer_add_counter_defs(w, 1, 0, 1, NULL, CAPTURE_CTRDEF_MAX_COUNTERS + 1) == -EINVAL);
        CaptureCounterDef bad = { .id = 0x1000000 };
        CHECK(capture_writer_add_counter_defs(w, 1, 0, 1, &bad, 1) == -EINVAL);
        CaptureCounterSetValue zero = { .id = 0 };
        CHECK(capture_writer_add_counter_values(w, 1, 0, 1, &zero, 1) == -EINVAL);
        CHECK_OK(capture_writer_flush(w));
        /* only the two frames that fit were written */
        CHECK(capture_writer_get_frame_count(w, CAPTURE_FRAME_MAP) == 1);
        CHECK(capture_writer_get_frame_count(w, CAPTURE_FRAME_SAMPLE) == 1);
        CHECK(capture_writer_get_bytes(w) == CAPTURE_FILE_HEADER_SIZE + CAPTURE_FRAME_MAX +
                                                     CAPTURE_SAMPLE_SIZE + 8 * CAPTURE_SAMPLE_MAX_ADDRS);
        capture_writer_free(w);

        CaptureReader *r = open_fd_checked(fd);
        CaptureFrame f;
        CHECK(capture_reader_next(r, &f) == 1);
        CHECK(f.type == CAPTURE_FRAME_MAP && f.len == CAPTURE_FRAME_MAX && strlen(f.map.filename) == fit);
        CHECK(capture_reader_next(r, &f) == 1);
        CHECK(f.type == CAPTURE_FRAME_SAMPLE && f.sample.n_addrs == CAPTURE_SAMPLE_MAX_ADDRS);
        CHECK(capture_reader_next(r, &f) == 0);
        capture_reader_free(r);
        free(name);
        free(huge);
        free(addrs);
}

TEST(big_endian_reads_back_identical) {
        _cleanup_close_ int fd = test_memfd("be");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        test_write_all_types(w);
        /* a multi-chunk file too, so is_last/len bitfields of both kinds show */
        uint8_t blob[70000];
        fill_pattern(blob, sizeof(blob), 7);
        CHECK_OK(capture_writer_add_file(w, TEST_T0 + 20, -1, -1, "/blob", blob, sizeof(blob)));
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);

        size_t len;
        _cleanup_free_ uint8_t *le = test_read_all(fd, &len);
        _cleanup_free_ uint8_t *be = malloc(len);
        MUST(be ? 0 : -ENOMEM);
        memcpy(be, le, len);
        test_swap_to_big_endian(be, len);
        CHECK(memcmp(le, be, len) != 0);

        CaptureReader *rl = NULL, *rb = NULL;
        CHECK_OK(capture_reader_open_memory(le, len, &rl, NULL));
        CHECK_OK(capture_reader_open_memory(be, len, &rb, NULL));
        CHECK(capture_reader_get_header(rl)->little_endian);
        CHECK(!capture_reader_get_header(rb)->little_endian);
        CHECK(capture_reader_get_header(rb)->start_time == TEST_T0);
        CHECK(capture_reader_get_header(rb)->end_time == TEST_T0 + 20);
        test_check_all_types(rb);
        capture_reader_rewind(rb);

        _cleanup_free_ char *dl = test_describe_all(rl);
        _cleanup_free_ char *db = test_describe_all(rb);
        CHECK_STR(db, dl);

        test_check_file(rb, "/blob", blob, sizeof(blob));
        capture_reader_free(rl);
        capture_reader_free(rb);
}

/* Appends a raw frame of an arbitrary type (little-endian) to buf. */
static size_t put_raw_frame(uint8_t *buf, uint8_t type, uint16_t len) {
        memset(buf, 0xA5, len); /* junk payload the reader must not interpret */
        buf[0] = (uint8_t) len;
        buf[1] = (uint8_t) (len >> 8);
        memset(buf + 2, 0, 14);
        buf[16] = type;
        return len;
}

TEST(unknown_frame_types_skipped_and_counted) {
        size_t len;
        _cleanup_free_ uint8_t *ref = test_capture_bytes(test_write_all_types, false, &len);

        /* header + TRACE(16) + frames 1..15 with DBUS_MESSAGE(17) after the 3rd + TRACE at the end */
        _cleanup_free_ uint8_t *buf = malloc(len + 4096);
        MUST(buf ? 0 : -ENOMEM);
        size_t pos = 0;
        memcpy(buf, ref, CAPTURE_FILE_HEADER_SIZE);
        pos = CAPTURE_FILE_HEADER_SIZE;
        pos += put_raw_frame(buf + pos, 16, 64);
        size_t rp = CAPTURE_FILE_HEADER_SIZE;
        for (int i = 0; rp < len; i++) {
                size_t fl = (size_t) (ref[rp] | ref[rp + 1] << 8);
                memcpy(buf + pos, ref + rp, fl);
                pos += fl;
                rp += fl;
                if (i == 2)
                        pos += put_raw_frame(buf + pos, 17, 200);
        }
        pos += put_raw_frame(buf + pos, 16, 24);

        CaptureReader *r;
        CHECK_OK(capture_reader_open_memory(buf, pos, &r, NULL));
        test_check_all_types(r);
        CaptureFrame f;
        CHECK(capture_reader_next(r, &f) == 0);
        CHECK(capture_reader_get_skipped(r) == 3);
        capture_reader_free(r);
}

static bool empty(const char *s) {
        return s && s[0] == 0;
}

TEST(empty_frames_have_arrays_and_empty_strings) {
        _cleanup_close_ int fd = test_memfd("empty");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        CHECK_OK(capture_writer_add_sample(w, 1, 0, 1, 1, NULL, 0));
        CHECK_OK(capture_writer_add_jitmap(w, 2, 0, 1, NULL, 0));
        CHECK_OK(capture_writer_add_counter_defs(w, 3, 0, 1, NULL, 0));
        CHECK_OK(capture_writer_add_counter_values(w, 4, 0, 1, NULL, 0));
        CHECK_OK(capture_writer_add_allocation(w, 5, 0, 1, 1, 0x10, 0, NULL, 0));
        CHECK_OK(capture_writer_add_process(w, 6, 0, 1, NULL));
        CHECK_OK(capture_writer_add_mark(w, 7, 0, 1, 0, NULL, NULL, NULL));
        CHECK_OK(capture_writer_add_metadata(w, 8, 0, 1, NULL, NULL, 0));
        CHECK_OK(capture_writer_add_log(w, 9, 0, 1, 0, NULL, NULL));
        CHECK_OK(capture_writer_add_overlay(w, 10, 0, 1, 0, NULL, NULL));
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);

        CaptureReader *r = open_fd_checked(fd);
        CaptureFrame f;
        CHECK(capture_reader_next(r, &f) == 1 && f.sample.n_addrs == 0 && f.sample.addrs);
        CHECK(capture_reader_next(r, &f) == 1 && f.jitmap.n_entries == 0 && f.jitmap.entries);
        CHECK(capture_reader_next(r, &f) == 1 && f.ctrdef.n_counters == 0 && f.ctrdef.counters);
        CHECK(capture_reader_next(r, &f) == 1 && f.ctrset.n_values == 0 && f.ctrset.values);
        CHECK(capture_reader_next(r, &f) == 1 && f.allocation.n_addrs == 0 && f.allocation.addrs);
        /* the strings: present, and empty */
        CHECK(capture_reader_next(r, &f) == 1 && empty(f.process.cmdline));
        CHECK(capture_reader_next(r, &f) == 1 && empty(f.mark.group) && empty(f.mark.message));
        CHECK(capture_reader_next(r, &f) == 1 && empty(f.metadata.id) && empty(f.metadata.metadata));
        CHECK(capture_reader_next(r, &f) == 1 && empty(f.log.message));
        CHECK(capture_reader_next(r, &f) == 1 && empty(f.overlay.src) && empty(f.overlay.dst));
        CHECK(capture_reader_next(r, &f) == 0);
        capture_reader_free(r);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
