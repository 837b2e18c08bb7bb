/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-memory-profiler.c: records memory-workload (a known leak, known
 * temporaries, realloc growth, aligned allocations, a 10 MiB peak, two
 * threads) under libperiscope-memory.so through the control-ring server, and
 * checks the memory report: the leaking call sites with their exact byte
 * counts, nothing else leaked from the workload's own functions, the
 * temporaries, the peak; and the ALLOCATION frames' threads.
 *
 * usage: test-memory-profiler CONTROL_RECORD PRELOAD_LIB WORKLOAD OUTDIR [CASE...] */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "report-memory.h"
#include "test-check.h"

/* The text of one table of the report: from its title to the next blank line. */
static char *section(const char *report, const char *title) {
        const char *s = strstr(report, title);
        if (!s)
                return strdup("");
        const char *e = strstr(s, "\n\n");
        return strndup(s, e ? (size_t) (e - s) : strlen(s));
}

/* Finds "N1 N2 ... NAME" in a table and returns the first two numbers. */
static bool row(const char *table, const char *name, uint64_t *a, uint64_t *b) {
        char *copy = strdup(table), *save = NULL;
        bool found = false;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t ll = strlen(line), nl = strlen(name);
                if (ll < nl || strcmp(line + ll - nl, name) != 0 || (ll > nl && line[ll - nl - 1] != ' '))
                        continue;
                if (sscanf(line, " %" SCNu64 " %" SCNu64, a, b) == 2)
                        found = true;
                break;
        }
        free(copy);
        return found;
}

/* The programs of the command line and the capture in OUTDIR. */
static const char *control_record, *preload_lib, *workload;
static char capture[4096];

/* The workload recorded once, its memory report read once: every case
 * reads the same recording. NULL (and the case fails) when either failed. */
static const char *memory_report(void) {
        static char *report;
        static bool tried;
        if (tried)
                return report;
        tried = true;
        pid_t pid = fork();
        if (pid == 0) {
                execl(control_record, control_record, "--preload", preload_lib, "--symbolize", capture, "--", workload,
                      (char *) NULL);
                _exit(127);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fail("recording the workload failed (status 0x%x)", status);
                return NULL;
        }
        size_t report_len = 0;
        FILE *out = open_memstream(&report, &report_len);
        ReportMemoryOptions o = { 0 };
        if (report_memory_path(capture, &o, out) < 0)
                fail("report_memory failed");
        fclose(out);
        printf("%s", report);
        return report;
}

/* One table of the report ("" when there is no report). */
static char *report_section(const char *title) {
        const char *report = memory_report();
        return section(report ? report : "", title);
}

TEST(leaks_exact) {
        char *leaked = report_section("Leaked");
        uint64_t bytes, count;
        if (!row(leaked, "leak_site", &bytes, &count) || bytes != 25 * 4096 || count != 25)
                fail("leak_site should have leaked exactly 102400 bytes in 25 allocations");
        if (!row(leaked, "leak_in_thread", &bytes, &count) || bytes != 2000 || count != 20)
                fail("leak_in_thread should have leaked exactly 2000 bytes in 20 allocations");
        free(leaked);
}

TEST(nothing_else_leaked) {
        char *leaked = report_section("Leaked");
        uint64_t bytes, count;
        CHECK_MSG(memory_report() && strstr(memory_report(), "Leaked"), "the report has no table of leaks");
        for (const char *const *f = (const char *const[]){ "temp_site", "grow_site", "aligned_site", "peak_site", "main", NULL };
             *f; f++)
                if (row(leaked, *f, &bytes, &count))
                        fail("%s freed everything but is listed as leaking %" PRIu64 " bytes", *f, bytes);
        free(leaked);
}

TEST(temporaries) {
        char *temps = report_section("Short-lived");
        uint64_t bytes, count;
        if (!row(temps, "temp_site", &count, &bytes) || count != 1000 || bytes != 512000)
                fail("temp_site: 1000 temporaries of 512 bytes expected");
        free(temps);
}

TEST(allocated) {
        char *alloc = report_section("Allocated");
        uint64_t bytes, count;
        if (!row(alloc, "grow_site", &bytes, &count) || count != 13)
                fail("grow_site: 13 reallocs (16 B to 64 KiB) expected");
        if (!row(alloc, "aligned_site", &bytes, &count) || count != 2 || bytes != 2024)
                fail("aligned_site: posix_memalign(1000) + aligned_alloc(1024) expected");
        if (!row(alloc, "peak_site", &bytes, &count) || count != 1 || bytes != 10u << 20)
                fail("peak_site: one 10 MiB block expected");
        free(alloc);
}

TEST(peak) {
        const char *report = memory_report();
        uint64_t peak = 0;
        const char *p = report ? strstr(report, "Peak: ") : NULL;
        if (!p || sscanf(p, "Peak: %" SCNu64, &peak) != 1 || peak < (10u << 20) || peak > (10u << 20) + (1u << 20))
                fail("peak should be the 10 MiB block plus the small live ones, is %" PRIu64, peak);
}

/* The allocations of the two threads carry their own thread ids. */
TEST(allocation_threads) {
        if (!memory_report())
                return;
        CaptureReader *r;
        char *err = NULL;
        if (capture_reader_open_path(capture, &r, &err) < 0) {
                fail("%s", err);
                free(err);
                return;
        }
        CaptureFrame f;
        int32_t proc = 0, tids[8];
        int n_tids = 0;
        while (capture_reader_next(r, &f) > 0) {
                if (f.type != CAPTURE_FRAME_ALLOCATION)
                        continue;
                if (!proc)
                        proc = f.pid;
                if (f.pid != proc)
                        fail("allocation of pid %d, the workload is %d", f.pid, proc);
                if (f.allocation.alloc_size == 100) { /* calloc(10, 10) in leak_in_thread */
                        bool known = false;
                        for (int i = 0; i < n_tids; i++)
                                known = known || tids[i] == f.allocation.tid;
                        if (!known && n_tids < 8)
                                tids[n_tids++] = f.allocation.tid;
                }
        }
        capture_reader_free(r);
        if (n_tids != 2 || tids[0] == proc || tids[1] == proc)
                fail("leak_in_thread allocations came from %d threads (expected 2, not the main thread)", n_tids);
}

/* usage: test-memory-profiler CONTROL_RECORD PRELOAD_LIB WORKLOAD OUTDIR [CASE...] */
int main(int argc, char **argv) {
        if (argc < 5) {
                fprintf(stderr, "usage: %s CONTROL_RECORD PRELOAD_LIB WORKLOAD OUTDIR [CASE...]\n", argv[0]);
                return 2;
        }
        control_record = argv[1], preload_lib = argv[2], workload = argv[3];
        snprintf(capture, sizeof(capture), "%s/memory-workload.syscap", argv[4]);
        return test_main(argc - 4, argv + 4);
}
