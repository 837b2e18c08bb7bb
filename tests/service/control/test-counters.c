/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-counters.c: runs the system counters on an sd-event loop while a
 * child busy-loops and then touches 200 MB, and checks the CTRSET values
 * against what /proc says over the same intervals; every source either
 * defines counters or is named in a LOG frame as missing; option errors say
 * what to pass. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sysprof-capture.h>

#include "basic.h"
#include "capture-tmp.h"
#include "capture.h"
#include "counters.h"
#include "test-check.h"

#define INTERVAL_MS 100
#define ALLOC_BYTES (200ull << 20)

/* /proc/stat "cpu" line: busy and total jiffies, the way the counter counts. */
static void proc_cpu(uint64_t *busy, uint64_t *total) {
        FILE *f = fopen("/proc/stat", "re");
        uint64_t v[8] = { 0 };
        if (!f || fscanf(f, "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                            " %" SCNu64,
                         &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
                fail("cannot read /proc/stat");
                if (f)
                        fclose(f);
                return;
        }
        fclose(f);
        *total = 0;
        for (int i = 0; i < 8; i++)
                *total += v[i];
        *busy = *total - v[3] - v[4];
}

/* How much of the child's 200 MB "used" must show, in /proc and in the
 * counter alike. Less than 200 MB: this VM's memory manager (kdamond,
 * free-page reporting) gives memory back to the host while the child
 * touches its pages, and MemAvailable has been seen to move by only 118 MB;
 * well above the tens of MB other processes make it wander. */
#define MEM_GROWTH_MIN ((int64_t) (80ll << 20))

static int64_t proc_mem_used(void) {
        FILE *f = fopen("/proc/meminfo", "re");
        char line[256];
        int64_t total = -1, avail = -1, v;
        while (f && fgets(line, sizeof(line), f)) {
                if (sscanf(line, "MemTotal: %" SCNd64, &v) == 1)
                        total = v * 1024;
                else if (sscanf(line, "MemAvailable: %" SCNd64, &v) == 1)
                        avail = v * 1024;
        }
        if (f)
                fclose(f);
        if (total < 0 || avail < 0)
                fail("cannot read /proc/meminfo");
        return total - avail;
}

static void run_loop_for(sd_event *e, int64_t ns) {
        int64_t end = now_monotonic_ns() + ns;
        while (now_monotonic_ns() < end)
                sd_event_run(e, 10000);
}

static void run_loop_until_exit(sd_event *e, pid_t pid) {
        int status;
        for (;;) {
                sd_event_run(e, 10000);
                if (waitpid(pid, &status, WNOHANG) == pid)
                        break;
        }
}

/* Option errors say what to pass. */
TEST(options) {
        char *err = NULL;
        char *bad[] = { (char *) "cpu", (char *) "gpu", NULL };
        if (counters_validate(bad, 0, &err) != -EINVAL || !err || !strstr(err, "'gpu'") || !strstr(err, "memory"))
                fail("unknown source: %s", err ? err : "(accepted)");
        free(err);
        err = NULL;
        if (counters_validate(NULL, 5, &err) != -EINVAL || !err || !strstr(err, "counter-interval-ms"))
                fail("interval 5 ms: %s", err ? err : "(accepted)");
        free(err);
        if (counters_validate(NULL, 250, NULL) != 0)
                fail("defaults rejected");
        if (!counters_source_available("cpu") || !counters_source_available("memory"))
                fail("cpu or memory reported missing on Linux");
        if (counters_source_available("gpu"))
                fail("an unknown source is reported available");
}

/* One recording of the two phases, made on the first case that asks: the
 * capture (in tmp, fd) and what /proc said next to it. */
typedef struct Recorded {
        FILE *tmp;
        int fd;
        unsigned n_counters, n_missing;
        uint64_t busy0, total0, busy1, total1;
        int64_t cpu_t0, cpu_t1;
        int64_t mem0[5], mem1[5], mem_t0[5], mem_t1[5];
        int rounds;
} Recorded;

static int record(Recorded *rec) {
        sd_event *e = NULL;
        int fd = -1;
        CaptureWriter *w;
        int r = capture_tmp_new(&e, &rec->tmp, &fd, &w);
        if (r < 0)
                return r;
        rec->fd = fd;
        CounterIdAllocator ids = {};
        Counters *c;
        char *err = NULL;
        r = counters_new(e, w, &ids, (char *const *) counters_known_sources(), INTERVAL_MS, &c, &err);
        if (r < 0) {
                fprintf(stderr, "counters_new: %s %s\n", strerror(-r), err ? err : "");
                return r;
        }
        run_loop_for(e, 300 * 1000000ll);

        /* Phase 1: one CPU busy for 1.5 s. */
        rec->cpu_t0 = now_monotonic_ns();
        proc_cpu(&rec->busy0, &rec->total0);
        pid_t pid = fork();
        if (pid == 0) {
                int64_t end = now_monotonic_ns() + 1500 * 1000000ll;
                volatile uint64_t x = 0;
                while (now_monotonic_ns() < end)
                        x++;
                _exit(0);
        }
        run_loop_until_exit(e, pid);
        proc_cpu(&rec->busy1, &rec->total1);
        rec->cpu_t1 = now_monotonic_ns();

        /* Phase 2: a child touches 200 MB and holds it; up to five
         * times, since other processes on a shared machine move memory too. */
        int64_t *mem0 = rec->mem0, *mem1 = rec->mem1, *mem_t0 = rec->mem_t0, *mem_t1 = rec->mem_t1;
        for (int k = 0; k < 5; k++) {
                rec->rounds++;
                int pipefd[2], gofd[2];
                if (pipe(pipefd) < 0 || pipe(gofd) < 0)
                        return -errno;
                pid = fork();
                if (pid == 0) {
                        /* volatile: the compiler must not drop stores nobody reads */
                        volatile char *p = malloc(ALLOC_BYTES);
                        char go;
                        if (!p || read(gofd[0], &go, 1) != 1)
                                _exit(1);
                        for (size_t i = 0; i < ALLOC_BYTES; i += 4096)
                                p[i] = 0x5a;
                        if (write(pipefd[1], "x", 1) != 1)
                                _exit(1);
                        usleep(800000);
                        _exit(p[12288] == 0x5a ? 0 : 1);
                }
                close(pipefd[1]);
                close(gofd[0]);
                /* A counter sample right next to each /proc read, as close
                 * as possible around the touching of the 200 MB. */
                mem0[k] = proc_mem_used();
                mem_t0[k] = now_monotonic_ns();
                counters_sample(c);
                if (write(gofd[1], "g", 1) != 1)
                        return -errno;
                close(gofd[1]);
                char byte;
                while (read(pipefd[0], &byte, 1) != 1)
                        ;
                close(pipefd[0]);
                mem1[k] = proc_mem_used();
                mem_t1[k] = now_monotonic_ns();
                counters_sample(c);
                run_loop_until_exit(e, pid);
                run_loop_for(e, 3 * INTERVAL_MS * 1000000ll);
                if (mem1[k] - mem0[k] >= MEM_GROWTH_MIN)
                        break; /* /proc saw it: no need for another round */
        }

        rec->n_counters = counters_get_n_counters(c), rec->n_missing = counters_get_n_missing(c);
        if (counters_sample(c) < 0)
                fail("sampling failed");
        counters_free(c);
        capture_writer_flush(w);
        capture_writer_free(w);
        sd_event_unref(e);
        return 0;
}

static const Recorded *recorded(void) {
        static Recorded rec = { .fd = -1 };
        static int r = 1;
        if (r > 0) {
                r = record(&rec);
                if (r < 0)
                        fprintf(stderr, "recording the counters failed: %s\n", strerror(-r));
        }
        if (r < 0) {
                fail("no recording to check");
                return NULL;
        }
        return &rec;
}

/* The capture read from its start. */
static CaptureReader *open_recorded(const Recorded *rec) {
        CaptureReader *rd = NULL;
        char *err = NULL;
        lseek(rec->fd, 0, SEEK_SET);
        if (capture_reader_open_fd(rec->fd, &rd, &err) < 0) {
                fail("capture unreadable: %s", err);
                free(err);
                return NULL;
        }
        return rd;
}

/* The counters the capture defines. */
typedef struct Defs {
        uint32_t combined, used;
        unsigned n_defs, n_missing_logs, n_cpu_rows;
        uint64_t n_frames;
} Defs;

static bool read_defs(const Recorded *rec, Defs *ret) {
        CaptureReader *rd = open_recorded(rec);
        if (!rd)
                return false;
        uint32_t combined = 0, used = 0;
        unsigned n_defs = 0, n_missing_logs = 0, n_cpu_rows = 0;
        uint32_t seen_ids[4096];
        CaptureFrame f;
        uint64_t n_frames = 0;
        while (capture_reader_next(rd, &f) > 0) {
                n_frames++;
                if (f.type == CAPTURE_FRAME_LOG && strstr(f.log.message, "left out")) {
                        n_missing_logs++;
                        char name[32];
                        if (sscanf(f.log.message, "counter source '%31[a-z]'", name) != 1 ||
                            counters_source_available(name))
                                fail("LOG says a source is missing that exists: %s", f.log.message);
                }
                if (f.type != CAPTURE_FRAME_CTRDEF)
                        continue;
                for (int i = 0; i < f.ctrdef.n_counters; i++) {
                        CaptureCounterDef def = f.ctrdef.counters[i]; /* a copy: keeps GCC's -Wstringop-overread calm under ASan */
                        const CaptureCounterDef *d = &def;
                        for (unsigned j = 0; j < n_defs && j < 4096; j++)
                                if (seen_ids[j] == d->id)
                                        fail("counter id %u defined twice", d->id);
                        if (n_defs < 4096)
                                seen_ids[n_defs] = d->id;
                        n_defs++;
                        if (strcmp(d->category, "CPU Percent") == 0 && strcmp(d->name, "Combined") == 0)
                                combined = d->id;
                        else if (strcmp(d->category, "CPU Percent") == 0)
                                n_cpu_rows++;
                        if (strcmp(d->category, "Memory") == 0 && strcmp(d->name, "Used") == 0)
                                used = d->id;
                }
        }
        capture_reader_free(rd);
        *ret = (Defs) { combined, used, n_defs, n_missing_logs, n_cpu_rows, n_frames };
        return true;
}

typedef struct Sample {
        int64_t time;
        double value;
} Sample;

/* The values of the two counters the cases check. */
typedef struct Values {
        Sample cpu[1024], mem[1024];
        size_t n_cpu, n_mem;
} Values;

static bool read_values(const Recorded *rec, const Defs *d, Values *out) {
        CaptureReader *rd = open_recorded(rec);
        if (!rd)
                return false;
        uint32_t combined = d->combined, used = d->used;
        Sample *cpu = out->cpu, *mem = out->mem;
        size_t n_cpu = 0, n_mem = 0;
        CaptureFrame f;
        while (capture_reader_next(rd, &f) > 0) {
                if (f.type != CAPTURE_FRAME_CTRSET)
                        continue;
                for (uint32_t i = 0; i < f.ctrset.n_values; i++) {
                        const CaptureCounterSetValue *v = &f.ctrset.values[i];
                        if (v->id == combined && n_cpu < 1024) {
                                cpu[n_cpu++] = (Sample) { f.time, v->value.vdbl };
                                if (v->value.vdbl < 0 || v->value.vdbl > 100)
                                        fail("CPU %% value %f", v->value.vdbl);
                        } else if (v->id == used && n_mem < 1024)
                                mem[n_mem++] = (Sample) { f.time, (double) v->value.v64 };
                }
        }
        capture_reader_free(rd);
        out->n_cpu = n_cpu, out->n_mem = n_mem;
        return true;
}

/* The recording and its counters, read once (NULL when either failed). */
static const Defs *recorded_defs(const Recorded **ret_rec) {
        static Defs d;
        static int state; /* 0: not read, 1: read, -1: failed */
        const Recorded *rec = recorded();
        if (!rec)
                return NULL;
        if (state == 0)
                state = read_defs(rec, &d) ? 1 : -1;
        if (state < 0)
                return NULL;
        *ret_rec = rec;
        return &d;
}

/* Every source either defines counters or is named in a LOG frame as
 * missing; no counter id twice; a row per CPU, Combined and Used there. */
TEST(sources_defined_or_named_missing) {
        const Recorded *rec;
        const Defs *defs = recorded_defs(&rec);
        if (!defs)
                return;
        Defs d = *defs;
        if (d.n_defs != rec->n_counters)
                fail("%u counters defined, the sampler says %u", d.n_defs, rec->n_counters);
        if (d.n_missing_logs != rec->n_missing)
                fail("%u LOG frames for %u missing sources", d.n_missing_logs, rec->n_missing);
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (d.n_cpu_rows != (unsigned) ncpu)
                fail("%u per-CPU rows for %ld CPUs", d.n_cpu_rows, ncpu);
        if (!d.combined || !d.used)
                fail("no CPU Percent/Combined or Memory/Used counter");
}

/* Values the counters and /proc both saw. */
static const Values *recorded_values(const Recorded **ret_rec) {
        static Values v;
        static int state; /* 0: not read, 1: read, -1: failed */
        const Recorded *rec;
        const Defs *d = recorded_defs(&rec);
        if (!d)
                return NULL;
        if (!d->combined || !d->used) {
                fail("no CPU Percent/Combined or Memory/Used counter");
                return NULL;
        }
        if (state == 0)
                state = read_values(rec, d, &v) ? 1 : -1;
        if (state < 0)
                return NULL;
        *ret_rec = rec;
        return &v;
}

TEST(cpu_matches_proc) {
        const Recorded *rec;
        const Values *v = recorded_values(&rec);
        if (!v)
                return;
        const Sample *cpu = v->cpu;
        size_t n_cpu = v->n_cpu;
        int64_t cpu_t0 = rec->cpu_t0, cpu_t1 = rec->cpu_t1;
        uint64_t busy0 = rec->busy0, total0 = rec->total0, busy1 = rec->busy1, total1 = rec->total1;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        /* CPU: each value covers the interval before its time. Average the
         * ones inside the busy phase and compare with /proc over it. */
        double sum = 0;
        int n = 0;
        for (size_t i = 0; i < n_cpu; i++)
                if (cpu[i].time > cpu_t0 + INTERVAL_MS * 1000000ll && cpu[i].time <= cpu_t1) {
                        sum += cpu[i].value;
                        n++;
                }
        double proc_pct = total1 > total0 ? 100.0 * (double) (busy1 - busy0) / (double) (total1 - total0) : 0;
        double avg = n ? sum / n : -1;
        printf("cpu: busy phase %d samples, counter average %.1f%%, /proc %.1f%% (%ld CPUs)\n", n, avg, proc_pct, ncpu);
        if (n < 8)
                fail("only %d CPU samples in a 1.5 s phase at %d ms", n, INTERVAL_MS);
        if (fabs(avg - proc_pct) > 15.0)
                fail("CPU counter average %.1f%% vs /proc %.1f%% over the same interval", avg, proc_pct);
        if (avg < 100.0 / (double) ncpu * 0.7)
                fail("CPU counter %.1f%% while one of %ld CPUs was busy-looping", avg, ncpu);
}

TEST(memory_matches_proc) {
        const Recorded *rec;
        const Values *v = recorded_values(&rec);
        if (!v)
                return;
        const Sample *mem = v->mem;
        size_t n_mem = v->n_mem;
        int rounds = rec->rounds;
        const int64_t *mem0 = rec->mem0, *mem1 = rec->mem1, *mem_t0 = rec->mem_t0, *mem_t1 = rec->mem_t1;
        /* Memory: the last value before the allocation vs the first while
         * held, next to what /proc said at the same moments. In every round
         * the counter must say what /proc said; and where /proc saw the
         * 200 MB (it may not: a shared machine frees memory meanwhile, as CI
         * once did in all five rounds), the counter must have seen it too. */
        bool agrees = true, proc_saw = false;
        for (int k = 0; k < rounds; k++) {
                double before = -1, after = -1;
                for (size_t i = 0; i < n_mem; i++) {
                        if (before < 0 && mem[i].time >= mem_t0[k])
                                before = mem[i].value;
                        if (after < 0 && mem[i].time >= mem_t1[k])
                                after = mem[i].value;
                }
                double grew = after - before, proc_grew = (double) (mem1[k] - mem0[k]);
                printf("memory round %d: counter grew %.1f MB, /proc %.1f MB while a child touched 200 MB\n", k,
                       grew / 1048576.0, proc_grew / 1048576.0);
                if (before < 0 || after < 0 || fabs(before - (double) mem0[k]) > 32.0 * 1048576 ||
                    fabs(after - (double) mem1[k]) > 32.0 * 1048576) {
                        fail("memory round %d: the counter (%.1f → %.1f MB) is not what /proc said (%.1f → %.1f MB)", k,
                             before / 1048576.0, after / 1048576.0, (double) mem0[k] / 1048576.0,
                             (double) mem1[k] / 1048576.0);
                        agrees = false;
                } else if (proc_grew >= (double) MEM_GROWTH_MIN) {
                        proc_saw = true;
                        if (grew < (double) MEM_GROWTH_MIN)
                                fail("memory round %d: /proc grew %.1f MB, the counter %.1f MB", k,
                                     proc_grew / 1048576.0, grew / 1048576.0);
                }
        }
        if (agrees && !proc_saw)
                printf("memory: /proc never saw the 200 MB in %d rounds (other processes freed memory meanwhile); "
                       "the counter said what /proc said in each\n",
                       rounds);
}

/* Sysprof's reader takes the file. */
TEST(sysprof_reader_accepts) {
        const Recorded *rec;
        const Defs *d = recorded_defs(&rec);
        if (!d)
                return;
        uint64_t n_frames = d->n_frames;
        int fd = rec->fd;
        lseek(fd, 0, SEEK_SET);
        SysprofCaptureReader *sr = sysprof_capture_reader_new_from_fd(dup(fd));
        if (!sr)
                fail("libsysprof-capture rejects the capture");
        else {
                uint64_t k = 0;
                SysprofCaptureFrameType type;
                while (sysprof_capture_reader_peek_type(sr, &type)) {
                        bool ok = type == SYSPROF_CAPTURE_FRAME_CTRDEF ? sysprof_capture_reader_read_counter_define(sr) != NULL
                                  : type == SYSPROF_CAPTURE_FRAME_CTRSET ? sysprof_capture_reader_read_counter_set(sr) != NULL
                                                                         : sysprof_capture_reader_skip(sr);
                        if (!ok)
                                break;
                        k++;
                }
                if (k != n_frames)
                        fail("libsysprof-capture read %" PRIu64 " of %" PRIu64 " frames", k, n_frames);
                sysprof_capture_reader_unref(sr);
        }
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
