/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-writer.c: a program that writes a Sysprof capture of its own to
 * SYSPROF_TRACE_FD with Debian's libsysprof-capture-4 writer, as GJS and
 * GTK do, while it burns CPU. It prints what it wrote (pid, each mark's,
 * log's, counter value's and JavaScript-like sample's time, the JIT name)
 * for trace-check.c to find in the recording's capture.
 *   trace-writer env      sysprof_capture_writer_new_from_env()
 *   trace-writer fd       sysprof_capture_writer_new_from_fd(dup(SYSPROF_TRACE_FD))
 *   trace-writer garbage  good frames, then frames the service must refuse:
 *                         another process's pid, a time before the
 *                         recording, a malformed frame, a garbage tail
 *   trace-writer flood MIB  after a second of CPU work, marks until the
 *                         file holds MIB MiB; prints "frames N" */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysprof-capture.h>
#include <time.h>
#include <unistd.h>

#define PHASES 5
#define PHASE_NS (120 * 1000 * 1000ll)

static volatile uint64_t sink;

/* Keeps a CPU busy for ns, so the recording has samples of this process. */
static void burn(int64_t ns) {
        int64_t end = SYSPROF_CAPTURE_CURRENT_TIME + ns;
        uint64_t x = 1;
        while (SYSPROF_CAPTURE_CURRENT_TIME < end)
                for (int i = 0; i < 10000; i++)
                        x = x * 6364136223846793005ull + 1442695040888963407ull;
        sink = x;
}

/* Five phases: each a mark (its duration the phase's), a log, a counter
 * value and a sample in a JIT-named function, printed as written. */
static int write_phases(SysprofCaptureWriter *w, int first, int n) {
        int32_t pid = getpid();
        static unsigned id; /* one counter for every call */
        if (!id)
                id = sysprof_capture_writer_request_counter(w, 1);
        SysprofCaptureCounter def = { .category = "trace-test", .name = "phase", .description = "current phase",
                                      .id = id, .type = SYSPROF_CAPTURE_COUNTER_INT64 };
        /* a JIT-compiled function, as GJS names its JavaScript frames */
        static SysprofCaptureAddress js;
        if (!js && !(js = sysprof_capture_writer_add_jitmap(w, "js_render")))
                return -1;
        int64_t t = SYSPROF_CAPTURE_CURRENT_TIME;
        if (first == 0) {
                printf("jitmap js_render %" PRIu64 "\n", (uint64_t) js);
                if (!sysprof_capture_writer_define_counters(w, t, -1, pid, &def, 1))
                        return -1;
                printf("ctrdef phase %" PRId64 "\n", t);
        }
        for (int i = first; i < first + n; i++) {
                int64_t start = SYSPROF_CAPTURE_CURRENT_TIME;
                burn(PHASE_NS);
                int64_t end = SYSPROF_CAPTURE_CURRENT_TIME;
                char name[32], msg[64];
                snprintf(name, sizeof(name), "phase-%d", i);
                snprintf(msg, sizeof(msg), "phase %d done", i);
                SysprofCaptureCounterValue v = { .v64 = i };
                unsigned ids[1] = { id };
                if (!sysprof_capture_writer_add_mark(w, start, -1, pid, (uint64_t) (end - start), "trace-test", name,
                                                     msg) ||
                    !sysprof_capture_writer_add_log(w, end, -1, pid, 16 /* warning */, "trace-test", msg) ||
                    !sysprof_capture_writer_set_counters(w, end, -1, pid, ids, &v, 1) ||
                    !sysprof_capture_writer_add_sample(w, end, -1, pid, pid, &js, 1))
                        return -1;
                printf("sample %" PRId64 "\n", end);
                printf("mark %s %" PRId64 " %" PRId64 "\n", name, start, end - start);
                printf("log %" PRId64 " %s\n", end, msg);
                printf("ctrset %" PRId64 " %d\n", end, i);
        }
        return sysprof_capture_writer_flush(w) ? 0 : -1;
}

/* The trace fd itself (shared with the writer's dup: same file offset). */
static int trace_fd(void) {
        const char *s = getenv("SYSPROF_TRACE_FD");
        return s ? atoi(s) : -1;
}

static int write_raw(const void *data, size_t n) {
        return write(trace_fd(), data, n) == (ssize_t) n ? 0 : -1;
}

/* A 32-byte frame that says MARK but is too short to be one. */
static int write_malformed_mark(void) {
        uint8_t f[32] = {};
        uint16_t len = sizeof(f);
        int32_t pid = getpid();
        int64_t now = SYSPROF_CAPTURE_CURRENT_TIME;
        memcpy(f, &len, 2);
        memcpy(f + 4, &pid, 4);
        memcpy(f + 8, &now, 8);
        f[16] = SYSPROF_CAPTURE_FRAME_MARK;
        return write_raw(f, sizeof(f));
}

static int write_garbage(SysprofCaptureWriter *w) {
        if (write_phases(w, 0, 2) < 0)
                return -1;
        /* refused: pid 1 is not recorded; a time before the recording */
        if (!sysprof_capture_writer_add_mark(w, SYSPROF_CAPTURE_CURRENT_TIME, -1, 1, 0, "trace-test", "foreign-pid",
                                             "") ||
            !sysprof_capture_writer_add_mark(w, 1000, -1, getpid(), 0, "trace-test", "too-early", "") ||
            !sysprof_capture_writer_flush(w))
                return -1;
        if (write_malformed_mark() < 0) /* refused, the next frame still read */
                return -1;
        if (write_phases(w, 2, 1) < 0)
                return -1;
        /* a garbage tail: nothing after it can be read */
        uint8_t junk[100];
        memset(junk, 0xAB, sizeof(junk));
        if (write_raw(junk, sizeof(junk)) < 0)
                return -1;
        printf("refused 4\n");
        return 0;
}

/* Marks of about 100 bytes each, until the writer wrote mib MiB. */
static int write_flood(SysprofCaptureWriter *w, unsigned mib) {
        burn(1000 * 1000 * 1000ll);
        int32_t pid = getpid();
        uint64_t frames = 0;
        struct stat st;
        do {
                for (int i = 0; i < 1000; i++, frames++)
                        if (!sysprof_capture_writer_add_mark(w, SYSPROF_CAPTURE_CURRENT_TIME, -1, pid, 1, "flood",
                                                             "flood-mark", "a mark of the flood"))
                                return -1;
                if (!sysprof_capture_writer_flush(w))
                        return -1;
                if (fstat(trace_fd(), &st) < 0)
                        return -1;
        } while (st.st_size < (off_t) mib << 20);
        printf("frames %" PRIu64 "\n", frames);
        return 0;
}

int main(int argc, char **argv) {
        bool flood = argc == 3 && strcmp(argv[1], "flood") == 0;
        if (argc != 2 && !flood) {
                fprintf(stderr, "usage: trace-writer env|fd|garbage|flood MIB\n");
                return 2;
        }
        if (trace_fd() < 0) {
                fprintf(stderr, "trace-writer: SYSPROF_TRACE_FD is not set\n");
                return 1;
        }
        SysprofCaptureWriter *w = strcmp(argv[1], "fd") == 0 ? sysprof_capture_writer_new_from_fd(dup(trace_fd()), 0)
                                                             : sysprof_capture_writer_new_from_env(0);
        if (!w) {
                fprintf(stderr, "trace-writer: libsysprof-capture made no writer from SYSPROF_TRACE_FD=%s: %s\n",
                        getenv("SYSPROF_TRACE_FD"), strerror(errno));
                return 1;
        }
        printf("pid %d\n", (int) getpid());
        int r = flood                              ? write_flood(w, (unsigned) atoi(argv[2]))
                : strcmp(argv[1], "garbage") == 0 ? write_garbage(w)
                                                  : write_phases(w, 0, PHASES);
        if (r == 0 && !flood && strcmp(argv[1], "garbage") != 0)
                printf("refused 0\n");
        sysprof_capture_writer_unref(w);
        if (r < 0) {
                fprintf(stderr, "trace-writer: writing failed\n");
                return 1;
        }
        return 0;
}
