/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make-test-capture: writes captures with known contents for the CLI tests.
 *   make-test-capture reference OUT   every frame type once + unknown types 16, 17
 *   make-test-capture rich OUT        processes, samples, counters, marks, files, symbols, stats
 *   make-test-capture truncated OUT   "rich", cut in the middle of a frame
 *   make-test-capture big-endian OUT  "reference", as a big-endian host writes it */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "capture-test-util.h"

static void write_rich(CaptureWriter *w) {
        const int64_t t = TEST_T0;
        CHECK_OK(capture_writer_add_process(w, t, -1, 4242, "/usr/bin/app --flag"));
        CHECK_OK(capture_writer_add_process(w, t, -1, 17, "/usr/lib/systemd/systemd-journald"));
        CHECK_OK(capture_writer_add_process(w, t, -1, 900, ""));
        /* as Sysprof does: a later PROCESS from a perf COMM event carries only
         * the short task name, which must not hide the full command line ... */
        CHECK_OK(capture_writer_add_process(w, t + 1, -1, 4242, "app"));
        /* ... while an exec into another program does replace it */
        CHECK_OK(capture_writer_add_process(w, t + 1, -1, 900, "/usr/bin/exec-target --x"));
        CHECK_OK(capture_writer_add_map(w, t, -1, 4242, 0x400000, 0x500000, 0, 77, "/usr/bin/app"));
        CHECK_OK(capture_writer_add_map(w, t, -1, 4242, 0x7f0000000000, 0x7f0000100000, 0, 78,
                                        "/usr/lib/x86_64-linux-gnu/libc.so.6"));
        CaptureCounterDef defs[2] = {
                { .category = "CPU Percent", .name = "Combined", .description = "Combined CPU usage", .id = 1,
                  .type = CAPTURE_COUNTER_DOUBLE },
                { .category = "Memory", .name = "Used", .description = "Memory used", .id = 2,
                  .type = CAPTURE_COUNTER_INT64 },
        };
        CHECK_OK(capture_writer_add_counter_defs(w, t, -1, -1, defs, 2));
        for (int i = 0; i < 100; i++) {
                const uint64_t addrs[] = { CAPTURE_CONTEXT_USER, 0x401000 + (uint64_t) i, 0x402000 };
                CHECK_OK(capture_writer_add_sample(w, t + 10000000ll * i, i % 2, 4242, 4242 + i % 3, addrs, 3));
                if (i % 10 == 0) {
                        CaptureCounterSetValue v[2] = { { .id = 1, .value.vdbl = i / 2.0 }, { .id = 2, .value.v64 = i } };
                        CHECK_OK(capture_writer_add_counter_values(w, t + 10000000ll * i, -1, -1, v, i % 20 ? 1 : 2));
                }
        }
        /* what real captures contain and JSON cannot: a non-finite double and
         * a command line that is not UTF-8 */
        CaptureCounterSetValue nan_value = { .id = 1, .value.vdbl = NAN };
        CHECK_OK(capture_writer_add_counter_values(w, t + 5, -1, -1, &nan_value, 1));
        CHECK_OK(capture_writer_add_process(w, t + 5, -1, 31337, "bad\xff\xfe-utf8"));
        for (int i = 0; i < 3; i++)
                CHECK_OK(capture_writer_add_mark(w, t + 1000 * i, 0, 4242, 500, "gtk", "frame", "drawn"));
        CHECK_OK(capture_writer_add_mark(w, t + 5000, 0, 4242, 500, "app", "startup", ""));
        static const char stats[] = "lost_samples=7\nperf_lost_records=2\n";
        CHECK_OK(capture_writer_add_metadata(w, t, -1, -1, "periscope.stats", stats, strlen(stats)));
        CHECK_OK(capture_writer_add_file(w, t, -1, 4242, "/proc/4242/mountinfo", "1 2 3\n", 6));
        uint8_t blob[100000];
        memset(blob, 'x', sizeof(blob));
        CHECK_OK(capture_writer_add_file(w, t, -1, -1, "__symbols__", blob, sizeof(blob)));
        CHECK_OK(capture_writer_add_file(w, t, -1, -1, "__periscope/symbols", blob, 1000));
        CHECK_OK(capture_writer_add_timestamp(w, t + 2500000000ll, -1, -1)); /* 2.5 s after start */
}

/* A periscope.stats block no recorder writes: lines without '=', keys
 * that are not keys (one hiding a terminal escape), a repeated key. */
static void write_hostile_stats(CaptureWriter *w) {
        static const char stats[] = "lost_samples=5\nno equals sign\nSamples=1\nlost_samples=9\n"
                                    "\x1b[31mred=1\nhelper_failures=2\n";
        CHECK_OK(capture_writer_add_metadata(w, TEST_T0, -1, -1, CAPTURE_STATS_ID, stats, strlen(stats)));
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: make-test-capture reference|rich|truncated|big-endian|hostile-stats OUT\n");
                return 2;
        }
        const char *mode = argv[1];
        _cleanup_close_ int fd = test_memfd("capture");
        CaptureWriter *w;
        CHECK_OK(capture_writer_new_fd(fd, TEST_T0, &w));
        if (strcmp(mode, "reference") == 0 || strcmp(mode, "big-endian") == 0)
                test_write_all_types(w);
        else if (strcmp(mode, "rich") == 0 || strcmp(mode, "truncated") == 0)
                write_rich(w);
        else if (strcmp(mode, "hostile-stats") == 0)
                write_hostile_stats(w);
        else {
                fprintf(stderr, "make-test-capture: unknown mode %s\n", mode);
                return 2;
        }
        CHECK_OK(capture_writer_flush(w));
        capture_writer_free(w);

        size_t len;
        _cleanup_free_ uint8_t *buf = test_read_all(fd, &len);
        buf = realloc(buf, len + 256);
        CHECK(buf);
        if (strcmp(mode, "reference") == 0) {
                /* one TRACE (16) and one DBUS_MESSAGE (17) frame from newer Sysprof */
                for (int type = 16; type <= 17; type++) {
                        memset(buf + len, 0x5A, 48);
                        buf[len] = 48;
                        buf[len + 1] = 0;
                        memset(buf + len + 2, 0, 14);
                        buf[len + 16] = (uint8_t) type;
                        len += 48;
                }
        } else if (strcmp(mode, "big-endian") == 0)
                test_swap_to_big_endian(buf, len);
        else if (strcmp(mode, "truncated") == 0)
                len -= 100000 / 2; /* in the middle of the __symbols__ chunks */

        _cleanup_close_ int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(out >= 0);
        CHECK(write(out, buf, len) == (ssize_t) len);
        return 0;
}
