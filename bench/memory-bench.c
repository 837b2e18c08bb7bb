/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory-bench.c: the cost of libperiscope-memory.so per allocation.
 * Runs N malloc+free pairs of 64 bytes at a call depth of DEPTH frames (the
 * backtrace is what costs) and prints nanoseconds per pair.
 * usage: memory-bench [N [DEPTH]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *volatile sink;

static long long now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static void work(long n, int depth) {
        if (depth > 0) {
                work(n, depth - 1);
                sink = NULL; /* keeps the call from being a tail call */
                return;
        }
        for (long i = 0; i < n; i++) {
                void *p = malloc(64);
                sink = p;
                free(p);
        }
}

int main(int argc, char **argv) {
        long n = argc > 1 ? atol(argv[1]) : 1000000;
        int depth = argc > 2 ? atoi(argv[2]) : 10;
        long long t0 = now_ns();
        work(n, depth);
        long long t1 = now_ns();
        printf("%ld malloc+free pairs at depth %d: %.1f ns per pair\n", n, depth, (double) (t1 - t0) / (double) n);
        return 0;
}
