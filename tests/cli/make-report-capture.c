/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make-report-capture.c: writes the report fixture (report-fixture.h) with
 * Periscope's capture writer and symbol table builder.
 *
 *   make-report-capture ours OUT        the fixture with both symbol tables
 *   make-report-capture nosyms OUT      the fixture without symbols
 *   make-report-capture badtable OUT    a hostile Periscope table next to a good __symbols__
 *   make-report-capture big OUT N       N samples over many distinct stacks
 *   make-report-capture grown OUT       the fixture with 200 more samples in add_one (for --diff)
 *   make-report-capture events OUT      the fixture plus counters and marks over 3.4 s (--timeline)
 *   make-report-capture memory OUT      the fixture plus allocations of known sizes (--memory)
 *   make-report-capture dupmaps OUT     the fixture with every mapping record written twice
 *   make-report-capture container OUT   the fixture with worker in a Podman container "web"
 *   make-report-capture longcmd OUT     the fixture plus a process with a 3000-character command line
 *   make-report-capture bracketed OUT   the fixture with worker named "[worker]", as a process whose
 *                                       command line was empty (a kernel thread, one that exited)
 *   make-report-capture threads OUT     the fixture plus threads of app (see add_threads)
 *   make-report-capture threads-early OUT   the same, each name before the samples it names */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "report-fixture.h"
#include "test-check.h"

static void add_mappings(SymbolTableBuilder *b);

static void add_symbols(SymbolTableBuilder *b) {
        for (size_t i = 0; i < sizeof(fx_symbols) / sizeof(fx_symbols[0]); i++) {
                const FxSymbol *s = &fx_symbols[i];
                SymbolFrame f = { .function = s->name, .file = s->pid < 0 ? NULL : "/src/app.c", .line = 10 + (uint32_t) i,
                                  .flags = s->pid < 0 ? SYMBOL_FRAME_KERNEL : 0 };
                if (s->pid == FX_APP && strcmp(s->name, "compute") == 0) {
                        /* compute's first 0x20 bytes hold square() and add_one() inlined. */
                        SymbolFrame chain[] = {
                                { "add_one", "/src/math.h", 3, SYMBOL_FRAME_INLINED, 0 },
                                { "square", "/src/math.h", 8, SYMBOL_FRAME_INLINED, 0 },
                                { "compute", "/src/app.c", 21, 0, 0x10 },
                        };
                        MUST(symbol_table_builder_add_range(b, s->pid, s->begin, s->begin + 0x20, chain, 3));
                        MUST(symbol_table_builder_add_range(b, s->pid, s->begin + 0x20, s->end, &f, 1));
                        continue;
                }
                MUST(symbol_table_builder_add_range(b, s->pid, s->begin, s->end, &f, 1));
        }
        MUST(symbol_table_builder_add_unresolved(b, FX_APP, 0x7f1000000000, 0x7f1000100000, "helper failed"));
        add_mappings(b);
}

static void add_mappings(SymbolTableBuilder *b) {
        SymbolMapping m = { .pid = FX_APP, .start = 0x400000, .end = 0x500000, .path = "/usr/bin/app",
                            .method = "pinned", .verdict = "inode+build-id match", .build_id = "aa11",
                            .flags = SYMBOL_MAPPING_VERIFIED };
        MUST(symbol_table_builder_add_mapping(b, &m));
        SymbolMapping foo = { .pid = FX_APP, .start = 0x7f1000000000, .end = 0x7f1000100000, .path = "/usr/lib/libfoo.so",
                              .method = "map_files", .verdict = "binary changed since it was mapped" };
        MUST(symbol_table_builder_add_mapping(b, &foo));
}

/* CPU lanes of different ranges (a 7% dip and a 50% one), memory in bytes,
 * a frequency, and one program counter of app; marks of both processes. */
static void add_events(CaptureWriter *w, int64_t t0) {
        CaptureCounterDef defs[] = {
                { .category = "CPU Percent", .name = "Combined", .description = "CPU busy (not idle or iowait), all CPUs, %",
                  .id = 1, .type = CAPTURE_COUNTER_DOUBLE },
                { .category = "CPU Percent", .name = "Total CPU 1", .description = "CPU busy (not idle or iowait), %",
                  .id = 2, .type = CAPTURE_COUNTER_DOUBLE },
                { .category = "Memory", .name = "Used", .description = "MemTotal - MemAvailable, bytes", .id = 3,
                  .type = CAPTURE_COUNTER_INT64 },
                { .category = "Memory", .name = "Available", .description = "MemAvailable, bytes", .id = 4,
                  .type = CAPTURE_COUNTER_INT64 },
                { .category = "CPU Frequency", .name = "CPU 0", .description = "current frequency, MHz", .id = 5,
                  .type = CAPTURE_COUNTER_DOUBLE },
        };
        MUST(capture_writer_add_counter_defs(w, t0, -1, -1, defs, 5));
        CaptureCounterDef app = { .category = "app", .name = "queue length", .description = "requests waiting",
                                  .id = 6, .type = CAPTURE_COUNTER_INT64 };
        MUST(capture_writer_add_counter_defs(w, t0, 0, FX_APP, &app, 1));
        for (int i = 0; i <= 34; i++) {
                int64_t t = t0 + (int64_t) i * 100000000;
                CaptureCounterSetValue v[5] = {
                        { 1, { .vdbl = i >= 10 && i < 15 ? 93.0 : 100.0 } },
                        { 2, { .vdbl = i >= 20 && i < 25 ? 50.0 : 100.0 } },
                        { 3, { .v64 = (int64_t) 23000 * 1024 * 1024 + (int64_t) i * 64 * 1024 * 1024 } },
                        { 4, { .v64 = (int64_t) 8000 * 1024 * 1024 - (int64_t) i * 64 * 1024 * 1024 } },
                        { 5, { .vdbl = 2400.0 + 100.0 * (i % 4) } },
                };
                MUST(capture_writer_add_counter_values(w, t, -1, -1, v, 5));
                CaptureCounterSetValue q = { 6, { .v64 = i % 7 } };
                MUST(capture_writer_add_counter_values(w, t, 0, FX_APP, &q, 1));
        }
        /* app: a long "load" and three "request"s; worker: one "sync" */
        MUST(capture_writer_add_mark(w, t0 + 100000000, 0, FX_APP, 1500000000, "app", "load", "loading the configuration"));
        for (int i = 0; i < 3; i++)
                MUST(capture_writer_add_mark(w, t0 + 2000000000 + i * 300000000, 0, FX_APP, 200000000, "app", "request",
                                             "GET /"));
        MUST(capture_writer_add_mark(w, t0 + 2500000000, 0, FX_WORKER, 400000000, "worker", "sync", "flush"));
}

/* app: compute (inlined add_one) allocates 10 x 1000 bytes and frees 4,
 * write_data 5 x 100 bytes; worker_loop 4 x 50 bytes. */
static void add_allocations(CaptureWriter *w, int64_t *t) {
        static const uint64_t in_compute[] = { FX_COMPUTE_INL, FX_MAIN }, in_write[] = { FX_WRITE, FX_MAIN },
                              in_worker[] = { FX_W_LOOP };
        for (uint64_t i = 0; i < 10; i++)
                MUST(capture_writer_add_allocation(w, (*t)++, 0, FX_APP, FX_APP, 0x10000 + i * 0x1000, 1000, in_compute, 2));
        for (uint64_t i = 0; i < 4; i++)
                MUST(capture_writer_add_allocation(w, (*t)++, 0, FX_APP, FX_APP, 0x10000 + i * 0x1000, 0, in_compute, 2));
        for (uint64_t i = 0; i < 5; i++)
                MUST(capture_writer_add_allocation(w, (*t)++, 0, FX_APP, FX_APP, 0x90000 + i * 0x100, 100, in_write, 2));
        for (uint64_t i = 0; i < 4; i++)
                MUST(capture_writer_add_allocation(w, (*t)++, 0, FX_WORKER, FX_WORKER, 0x20000 + i * 0x100, 50, in_worker, 1));
}

static void add_frames(CaptureWriter *w, int64_t *t) {
        MUST(capture_writer_add_process(w, (*t)++, 0, FX_APP, "/usr/bin/app --fast"));
        MUST(capture_writer_add_process(w, (*t)++, 0, FX_WORKER, "worker"));
        for (size_t i = 0; i < sizeof(fx_maps) / sizeof(fx_maps[0]); i++)
                MUST(capture_writer_add_map(w, (*t)++, 0, fx_maps[i].pid, fx_maps[i].start, fx_maps[i].end,
                                            fx_maps[i].offset, 1000 + i, fx_maps[i].file));
        for (size_t i = 0; i < sizeof(fx_stacks) / sizeof(fx_stacks[0]); i++)
                for (unsigned k = 0; k < fx_stacks[i].count; k++)
                        MUST(capture_writer_add_sample(w, (*t)++, 0, fx_stacks[i].pid, fx_stacks[i].pid,
                                                       fx_stacks[i].addrs, fx_stacks[i].n));
}

/* app's main thread is "app-main"; tid 101 "net-worker" (10 samples of
 * compute); tid 102 "starting" (5 samples) then "renamed" (7); tid 103 has a
 * name with a newline and a control character (1 sample); tid 104 has no
 * name (3 samples: its process's main thread's name); tid 101 of another
 * process (300) is "elsewhere". The name frames are written after the
 * samples, as a recording may (its rings are read per CPU), or with early
 * each before the samples it names (one ring), and among them malformed
 * ones that readers skip. */
/* threads-early: the names add_threads() gives at the capture's start,
 * before any sample. */
static void add_early_thread_names(CaptureWriter *w) {
        MUST(capture_writer_add_thread_name(w, 1000000, -1, FX_APP, FX_APP, "app-main", false));
        MUST(capture_writer_add_thread_name(w, 1000000, -1, FX_APP, 101, "net-worker", false));
        MUST(capture_writer_add_thread_name(w, 1000000, -1, FX_APP, 103, "evil\nname\x01", false));
        MUST(capture_writer_add_thread_name(w, 1000000, -1, 300, 101, "elsewhere", false));
}

static void add_threads(CaptureWriter *w, int64_t *t, bool early) {
        static const uint64_t stack[] = { FX_COMPUTE, FX_MAIN };
        int64_t start = *t;
        for (unsigned k = 0; k < 10; k++)
                MUST(capture_writer_add_sample(w, (*t)++, 0, FX_APP, 101, stack, 2));
        if (early)
                MUST(capture_writer_add_thread_name(w, start, 0, FX_APP, 102, "starting", false));
        for (unsigned k = 0; k < 5; k++)
                MUST(capture_writer_add_sample(w, (*t)++, 0, FX_APP, 102, stack, 2));
        int64_t renamed = (*t)++;
        if (early)
                MUST(capture_writer_add_thread_name(w, renamed, 0, FX_APP, 102, "renamed", false));
        for (unsigned k = 0; k < 7; k++)
                MUST(capture_writer_add_sample(w, (*t)++, 0, FX_APP, 102, stack, 2));
        MUST(capture_writer_add_sample(w, (*t)++, 0, FX_APP, 103, stack, 2));
        for (unsigned k = 0; k < 3; k++)
                MUST(capture_writer_add_sample(w, (*t)++, 0, FX_APP, 104, stack, 2));
        if (!early) {
                MUST(capture_writer_add_thread_name(w, renamed, 0, FX_APP, 102, "renamed", false));
                MUST(capture_writer_add_thread_name(w, 1000000, -1, FX_APP, FX_APP, "app-main", false));
                MUST(capture_writer_add_thread_name(w, 1000000, -1, FX_APP, 101, "net-worker", false));
                MUST(capture_writer_add_thread_name(w, start, 0, FX_APP, 102, "starting", false));
                MUST(capture_writer_add_thread_name(w, 1000000, -1, FX_APP, 103, "evil\nname\x01", false));
                MUST(capture_writer_add_thread_name(w, 1000000, -1, 300, 101, "elsewhere", false));
        }
        static const char *const bad[] = { "tid=abc\nname=x", "tid=101\nnom=x", "name=x", "tid=-4\nname=x", "" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                MUST(capture_writer_add_metadata(w, 1000000, -1, FX_APP, CAPTURE_THREAD_NAME_ID, bad[i],
                                                 strlen(bad[i])));
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr,
                        "usage: %s "
                        "ours|nosyms|badtable|big|grown|events|memory|dupmaps|longcmd|container|bracketed|threads|"
                        "threads-early "
                        "OUT "
                        "[N]\n",
                        argv[0]);
                return 2;
        }
        const char *mode = argv[1];
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                perror(argv[2]);
                return 1;
        }
        CaptureWriter *w;
        int64_t t = 1000000;
        MUST(capture_writer_new_fd(fd, t, &w));
        close(fd);
        SymbolTableBuilder *b;
        MUST(symbol_table_builder_new(&b));

        if (strcmp(mode, "big") == 0) {
                /* Many samples over 5000 distinct stacks of 1-40 frames. */
                unsigned long n = argc > 3 ? strtoul(argv[3], NULL, 10) : 100000;
                MUST(capture_writer_add_process(w, t++, 0, 1, "/usr/bin/big"));
                MUST(capture_writer_add_map(w, t++, 0, 1, 0x400000, 0x800000, 0, 1, "/usr/bin/big"));
                for (unsigned f = 0; f < 2000; f++) {
                        char name[64];
                        snprintf(name, sizeof(name), "function_%u", f);
                        SymbolFrame fr = { .function = name };
                        MUST(symbol_table_builder_add_range(b, 1, 0x400000 + f * 0x100, 0x400000 + (f + 1) * 0x100, &fr, 1));
                }
                uint64_t addrs[40];
                uint32_t seed = 1;
                for (unsigned long i = 0; i < n; i++) {
                        uint32_t stack = (uint32_t) (i * 2654435761u) % 5000;
                        seed = stack + 1;
                        unsigned depth = 1 + stack % 40;
                        for (unsigned d = 0; d < depth; d++) {
                                seed = seed * 1103515245u + 12345u;
                                addrs[d] = 0x400000 + (seed >> 8) % 2000 * 0x100 + 8;
                        }
                        MUST(capture_writer_add_sample(w, t++, 0, 1, 1, addrs, depth));
                }
                MUST(symbol_table_builder_write(b, w, t++));
        } else {
                if (strcmp(mode, "threads-early") == 0)
                        add_early_thread_names(w);
                add_frames(w, &t);
                if (strcmp(mode, "grown") == 0) {
                        for (unsigned k = 0; k < 200; k++)
                                MUST(capture_writer_add_sample(w, t++, 0, FX_APP, FX_APP, fx_stacks[0].addrs, fx_stacks[0].n));
                } else if (strcmp(mode, "events") == 0)
                        add_events(w, 1000000);
                else if (strcmp(mode, "memory") == 0)
                        add_allocations(w, &t);
                else if (strcmp(mode, "container") == 0) {
                        /* worker runs in a Podman container */
                        static const char desc[] = "engine=podman\nname=web\nimage=localhost/web:1\n";
                        MUST(capture_writer_add_file(w, t++, 0, FX_WORKER, "periscope:container", desc, strlen(desc)));
                } else if (strcmp(mode, "bracketed") == 0) {
                        /* worker seen again without a command line */
                        MUST(capture_writer_add_process(w, t++, 0, FX_WORKER, "[worker]"));
                } else if (strcmp(mode, "threads") == 0 || strcmp(mode, "threads-early") == 0) {
                        add_threads(w, &t, strcmp(mode, "threads-early") == 0);
                } else if (strcmp(mode, "longcmd") == 0) {
                        /* a command line of 3000 characters */
                        char cmd[3100] = "python3 -c ";
                        memset(cmd + strlen(cmd), 'x', 3000);
                        cmd[3011] = '\0';
                        MUST(capture_writer_add_process(w, t++, 0, 300, cmd));
                }
                if (strcmp(mode, "ours") == 0 || strcmp(mode, "grown") == 0 || strcmp(mode, "events") == 0 ||
                    strcmp(mode, "memory") == 0 || strcmp(mode, "dupmaps") == 0 || strcmp(mode, "longcmd") == 0 ||
                    strcmp(mode, "container") == 0 || strcmp(mode, "bracketed") == 0 || strcmp(mode, "threads") == 0 ||
                    strcmp(mode, "threads-early") == 0) {
                        add_symbols(b);
                        if (strcmp(mode, "dupmaps") == 0) /* the same mappings recorded twice */
                                add_mappings(b);
                        MUST(symbol_table_builder_add_pid(b, FX_WORKER));
                        MUST(symbol_table_builder_write(b, w, t++));
                } else if (strcmp(mode, "badtable") == 0) {
                        add_symbols(b);
                        uint8_t *data;
                        size_t len;
                        MUST(symbol_table_builder_serialize_sysprof(b, &data, &len));
                        MUST(capture_writer_add_file(w, t++, -1, -1, SYMBOLS_SYSPROF_PATH, data, len));
                        free(data);
                        MUST(symbol_table_builder_serialize_periscope(b, &data, &len));
                        data[20] ^= 0x40; /* n_frames no longer matches the size */
                        MUST(capture_writer_add_file(w, t++, -1, -1, SYMBOLS_PERISCOPE_PATH, data, len));
                        free(data);
                } else if (strcmp(mode, "nosyms") != 0) {
                        fprintf(stderr, "unknown mode %s\n", mode);
                        return 2;
                }
        }
        MUST(capture_writer_flush(w));
        capture_writer_free(w);
        symbol_table_builder_free(b);
        return 0;
}
