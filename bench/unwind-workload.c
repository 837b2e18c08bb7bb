/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-workload: the fixed-work program of bench/run-unwind-bench.sh,
 * built with -O2 -fomit-frame-pointer like distribution packages. A fixed
 * number of rounds (argv[1], default 1000) of: a five-deep chain with
 * different frame sizes ending in a hot loop, and a qsort whose comparator
 * is called back from libc. Prints "work_ns=N end_ns=M cpu_ns=C"
 * (CLOCK_MONOTONIC, process CPU time) so the harness can tell the workload's
 * own run time and when it ended. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

volatile uint64_t bench_sink;

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

NOINLINE static uint64_t bench_leaf(uint64_t v) {
        for (int i = 0; i < 40000; i++)
                v = v * 6364136223846793005ull + 1442695040888963407ull;
        return v;
}

NOINLINE static uint64_t bench_level4(uint64_t v) {
        uint64_t r = bench_leaf(v);
        bench_sink = r;
        return r ^ v;
}

NOINLINE static uint64_t bench_level3(uint64_t v) {
        volatile char big[2048];
        big[v % sizeof(big)] = (char) v;
        return bench_level4(v + big[(v * 7) % sizeof(big)]) + 1;
}

NOINLINE static uint64_t bench_level2(uint64_t v) {
        volatile uint64_t small[6];
        small[v % 6] = v;
        return bench_level3(v) + small[v % 6];
}

NOINLINE static uint64_t bench_level1(uint64_t v) {
        uint64_t r = bench_level2(v + 1);
        bench_sink = r;
        return r + 2;
}

NOINLINE static int bench_compare(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        for (int i = 0; i < 4; i++) {
                x = x * 2862933555777941757ull + 3037000493ull;
                y = y * 2862933555777941757ull + 3037000493ull;
        }
        return (x > y) - (x < y);
}

NOINLINE static void bench_sort(uint64_t *items, size_t n, uint64_t seed) {
        for (size_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ull + 1;
                items[i] = seed >> 11;
        }
        qsort(items, n, sizeof(*items), bench_compare);
        bench_sink = items[n / 2];
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 1000;
        uint64_t *items = malloc(4000 * sizeof(uint64_t)), v = 1;
        int64_t start = now_ns();

        if (!items)
                return 1;
        for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < 20; i++)
                        v = bench_level1(v);
                bench_sort(items, 4000, (uint64_t) r);
        }
        int64_t end = now_ns();
        struct timespec cpu;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
        free(items);
        printf("work_ns=%lld end_ns=%lld cpu_ns=%lld\n", (long long) (end - start), (long long) end,
               (long long) cpu.tv_sec * 1000000000 + cpu.tv_nsec);
        return v == 42 ? 2 : 0;
}
