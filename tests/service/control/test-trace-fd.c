/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-trace-fd.c: service/control/trace-fd.c without a daemon, against
 * files written by Debian's libsysprof-capture-4 writer and damaged on
 * purpose: two writers sharing one trace fd (GTK and GJS in one process)
 * both get merged; a file cut at every byte loses only the cut frame; every
 * single flipped byte and random tails are refused without harm (the
 * sanitizer build checks the harm); foreign pids and times outside the
 * recording are refused; counter ids are remapped; the kept frames come
 * out in time order. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sysprof-capture.h>
#include <unistd.h>

#include "capture-tmp.h"
#include "test-check.h"
#include "control.h"

typedef struct Result {
        TraceFdStats stats;
        uint64_t marks, logs, ctrdefs;
        int64_t last_time;
        bool in_order;
} Result;

static bool only_us(int32_t pid, void *userdata) {
        return pid == getpid();
}

/* A memfd holding data, as a program would have left its trace fd. */
static int memfd_with(const uint8_t *data, size_t n) {
        int fd = memfd_create("test-trace", MFD_CLOEXEC);
        if (fd < 0 || write(fd, data, n) != (ssize_t) n)
                return -1;
        return fd;
}

/* Merges what fd holds (the program's copy of a trace fd) into a new
 * capture and reads the result back. */
typedef int (*FillFunc)(int fd, void *userdata);

static int merge(FillFunc fill, void *userdata, int64_t start, CounterIdAllocator *ids, Result *res) {
        sd_event *e = NULL;
        FILE *tmp = NULL;
        int capture_fd = -1;
        CaptureWriter *w = NULL;
        int r = capture_tmp_new(&e, &tmp, &capture_fd, &w);
        if (r < 0)
                return r;
        TraceFds *t = NULL;
        int program_fd = -1;
        if ((r = trace_fds_new(&t)) < 0 || (r = trace_fds_open(t, &program_fd)) < 0)
                return r;
        r = fill(program_fd, userdata);
        close(program_fd);
        if (r < 0)
                return r;
        const TraceMerge m = { .writer = w, .ids = ids, .start_time = start, .end_time = now_monotonic_ns(),
                               .pid_known = only_us };
        r = trace_fds_merge(t, &m);
        *res = (Result) { .stats = *trace_fds_get_stats(t), .in_order = true };
        CHECK(trace_fds_open(t, &program_fd) == -ESTALE);
        trace_fds_free(t);
        if (r >= 0)
                r = capture_writer_flush(w);
        capture_writer_free(w);
        sd_event_unref(e);
        CaptureReader *rd = NULL;
        if (r >= 0)
                r = capture_reader_open_fd(capture_fd, &rd, NULL);
        CaptureFrame f;
        while (r >= 0 && (r = capture_reader_next(rd, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_MARK) {
                        res->marks++;
                        res->in_order &= f.time >= res->last_time;
                        res->last_time = f.time;
                } else if (f.type == CAPTURE_FRAME_LOG && strcmp(f.log.domain, "periscope") != 0)
                        res->logs++;
                else if (f.type == CAPTURE_FRAME_CTRDEF)
                        res->ctrdefs += f.ctrdef.n_counters ? f.ctrdef.counters[0].id : 0;
        }
        capture_reader_free(rd);
        fclose(tmp);
        return r;
}

/* ---- what programs write ---- */

static int64_t t0;

/* n marks and a log from one writer, flushed after each mark when asked,
 * times going backwards so the merge has to sort them. */
static bool add_marks(SysprofCaptureWriter *w, int first, int n) {
        for (int i = first; i < first + n; i++) {
                char name[16];
                snprintf(name, sizeof(name), "m%d", i);
                if (!sysprof_capture_writer_add_mark(w, t0 + 1000000 - i * 1000, -1, getpid(), 5, "g", name, "msg"))
                        return false;
        }
        return sysprof_capture_writer_add_log(w, t0 + 2000000, -1, getpid(), 16, "d", "log") &&
               sysprof_capture_writer_flush(w);
}

static int fill_good(int fd, void *userdata) {
        SysprofCaptureWriter *w = sysprof_capture_writer_new_from_fd(dup(fd), 0);
        if (!w)
                return -1;
        unsigned id = sysprof_capture_writer_request_counter(w, 1);
        SysprofCaptureCounter def = { .category = "c", .name = "n", .id = id };
        bool ok = sysprof_capture_writer_define_counters(w, t0 + 10, -1, getpid(), &def, 1) && add_marks(w, 0, 8);
        /* refused: someone else's pid, a time before the recording */
        ok = ok && sysprof_capture_writer_add_mark(w, t0 + 20, -1, getpid() + 1000000, 0, "g", "foreign", "") &&
             sysprof_capture_writer_add_mark(w, t0 - 1000000000, -1, getpid(), 0, "g", "early", "") &&
             sysprof_capture_writer_flush(w);
        sysprof_capture_writer_unref(w);
        return ok ? 0 : -1;
}

/* Two writers on one fd, flushing in turns (GTK_TRACE_FD and GJS_TRACE_FD
 * naming the same fd). Sysprof's writer truncates the file and writes its
 * header at once: the second one's truncation turns the first header into
 * a hole, the file offset they share goes on, their frames follow in turns. */
static int fill_two_writers(int fd, void *userdata) {
        SysprofCaptureWriter *a = sysprof_capture_writer_new_from_fd(dup(fd), 0);
        SysprofCaptureWriter *b = sysprof_capture_writer_new_from_fd(dup(fd), 0);
        bool ok = a && b && add_marks(a, 0, 2) && add_marks(b, 10, 3) && add_marks(a, 2, 2) && add_marks(b, 13, 1);
        if (a)
                sysprof_capture_writer_unref(a);
        if (b)
                sysprof_capture_writer_unref(b);
        return ok ? 0 : -1;
}

typedef struct Bytes {
        const uint8_t *data;
        size_t n;
} Bytes;

static int fill_bytes(int fd, void *userdata) {
        const Bytes *b = userdata;
        return write(fd, b->data, b->n) == (ssize_t) b->n ? 0 : -1;
}

/* The bytes a good program leaves behind (NULL, and the case fails, when
 * libsysprof-capture's writer wrote nothing). */
static uint8_t *good_file(size_t *ret_n) {
        int fd = memfd_with(NULL, 0);
        if (fd < 0 || fill_good(fd, NULL) < 0) {
                fail("libsysprof-capture's writer wrote nothing");
                return NULL;
        }
        off_t n = lseek(fd, 0, SEEK_END);
        uint8_t *data = malloc((size_t) n);
        if (!data || pread(fd, data, (size_t) n, 0) != n) {
                fail("cannot read back what libsysprof-capture's writer wrote");
                return NULL;
        }
        close(fd);
        *ret_n = (size_t) n;
        return data;
}

/* ---- tests ---- */

TEST(good_file_merged) {
        CounterIdAllocator ids = { .next = 5 }; /* the service's own counters took 1..4 */
        Result res;
        CHECK(merge(fill_good, NULL, t0, &ids, &res) == 0);
        CHECK_MSG(res.marks == 8 && res.logs == 1, "good file: %" PRIu64 " marks %" PRIu64 " logs", res.marks,
                  res.logs);
        CHECK_MSG(res.stats.frames_copied == 10 && res.stats.frames_refused == 2,
                  "good file: %" PRIu64 " copied %" PRIu64 " refused", res.stats.frames_copied,
                  res.stats.frames_refused);
        CHECK_MSG(res.ctrdefs == 5, "the program's counter 1 became %" PRIu64 ", not the next free id 5", res.ctrdefs);
        CHECK_MSG(res.in_order, "marks are not in time order");
}

TEST(two_writers_one_fd) {
        CounterIdAllocator ids = {};
        Result res;
        CHECK(merge(fill_two_writers, NULL, t0, &ids, &res) == 0);
        CHECK_MSG(res.marks == 8 && res.logs == 4 && res.stats.frames_refused == 0,
                  "two writers on one fd: %" PRIu64 " marks, %" PRIu64 " logs, %" PRIu64 " refused", res.marks,
                  res.logs, res.stats.frames_refused);
        CHECK(res.in_order);
}

/* Cut at every byte: the frames before the cut stay, at most the cut one is
 * refused, never more. */
TEST(cut_at_every_byte) {
        size_t n = 0;
        uint8_t *good = good_file(&n);
        if (!good)
                return;
        uint64_t last_copied = 0;
        for (size_t cut = 0; cut <= n; cut++) {
                CounterIdAllocator ids = {};
                Result res;
                Bytes b = { good, cut };
                if (merge(fill_bytes, &b, t0, &ids, &res) < 0) {
                        fail("cut at %zu: merge failed", cut);
                        free(good);
                        return;
                }
                CHECK_MSG(res.stats.frames_copied >= last_copied && res.stats.frames_refused <= 3,
                          "cut at %zu: %" PRIu64 " copied (before: %" PRIu64 "), %" PRIu64 " refused", cut,
                          res.stats.frames_copied, last_copied, res.stats.frames_refused);
                last_copied = res.stats.frames_copied;
        }
        CHECK(last_copied == 10);
        free(good);
}

/* Every byte flipped once: whatever the merge makes of them, it copies no
 * more frames than the file had and does no harm. */
TEST(flipped_bytes) {
        size_t n = 0;
        uint8_t *good = good_file(&n);
        uint8_t *bad = good ? malloc(n) : NULL;
        if (!bad) {
                fail("out of memory");
                free(good);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                memcpy(bad, good, n);
                bad[i] ^= 0xff;
                CounterIdAllocator ids = {};
                Result res;
                Bytes b = { bad, n };
                /* a flip may make a refused frame's pid or time acceptable */
                CHECK_MSG(merge(fill_bytes, &b, t0, &ids, &res) == 0 && res.stats.frames_copied <= 12,
                          "flip at %zu: %" PRIu64 " copied", i, res.stats.frames_copied);
        }
        free(bad);
        free(good);
}

/* Random tails after the good frames: those stay, the tail is refused. */
TEST(random_tails) {
        size_t n = 0;
        uint8_t *good = good_file(&n);
        uint8_t *bad = good ? malloc(n + 4096) : NULL;
        if (!bad) {
                fail("out of memory");
                free(good);
                return;
        }
        srand(1);
        for (int round = 0; round < 200; round++) {
                memcpy(bad, good, n);
                size_t tail = (size_t) rand() % 4096;
                for (size_t i = 0; i < tail; i++)
                        bad[n + i] = (uint8_t) rand();
                CounterIdAllocator ids = {};
                Result res;
                Bytes b = { bad, n + tail };
                CHECK_MSG(merge(fill_bytes, &b, t0, &ids, &res) == 0 && res.stats.frames_copied >= 10 &&
                                  (tail == 0 || res.stats.frames_refused >= 3),
                          "random tail of %zu: %" PRIu64 " copied %" PRIu64 " refused", tail, res.stats.frames_copied,
                          res.stats.frames_refused);
        }
        free(bad);
        free(good);
}

/* At most TRACE_MAX_FDS per recording; each one handed out is merged,
 * empty ones included. */
TEST(many_fds) {
        sd_event *e = NULL;
        FILE *tmp = NULL;
        int capture_fd = -1;
        CaptureWriter *w = NULL;
        TraceFds *t = NULL;
        if (capture_tmp_new(&e, &tmp, &capture_fd, &w) < 0 || trace_fds_new(&t) < 0) {
                fail("cannot set up");
                return;
        }
        for (int i = 0; i < TRACE_MAX_FDS; i++) {
                int fd = -1;
                CHECK(trace_fds_open(t, &fd) == 0);
                if (i < 3)
                        CHECK(fill_good(fd, NULL) == 0);
                close(fd);
        }
        int fd = -1;
        CHECK_MSG(trace_fds_open(t, &fd) == -EMFILE, "a trace fd past the limit of %d", TRACE_MAX_FDS);
        CounterIdAllocator ids = {};
        const TraceMerge m = { .writer = w, .ids = &ids, .start_time = t0, .end_time = now_monotonic_ns(),
                               .pid_known = only_us };
        CHECK(trace_fds_merge(t, &m) == 0);
        const TraceFdStats *st = trace_fds_get_stats(t);
        CHECK_MSG(st->fds == TRACE_MAX_FDS && st->frames_copied == 30 && st->frames_refused == 6,
                  "%d trace fds, 3 written: %" PRIu64 " fds, %" PRIu64 " copied, %" PRIu64 " refused",
                  TRACE_MAX_FDS, st->fds, st->frames_copied, st->frames_refused);
        /* three writers' counter 1 (one process): three capture ids */
        CHECK_MSG(ids.next == 4, "three writers' counter 1 got %u capture ids, not 3", ids.next - 1);
        trace_fds_free(t);
        capture_writer_free(w);
        sd_event_unref(e);
        fclose(tmp);
}

int main(int argc, char **argv) {
        t0 = now_monotonic_ns() - 1000000000; /* every frame written is in the past */
        return test_main(argc, argv);
}
