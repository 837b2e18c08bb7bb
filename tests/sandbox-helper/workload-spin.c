/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-spin.c: burns CPU for the given milliseconds in a loop that sits
 * in two levels of inlined functions, so samples land in inline frames:
 * main → spin_function → (inlined) spin_outer → (inlined) spin_inner. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void spin_inner(unsigned long i) {
        for (int k = 0; k < 2000; k++)
                sink = sink * 2654435761u + i + (unsigned long) k;
}

static inline __attribute__((always_inline)) void spin_outer(unsigned long i) {
        sink ^= i;
        spin_inner(i);
        sink += 3;
}

__attribute__((noinline)) void spin_function(long ms) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (unsigned long i = 0;; i++) {
                spin_outer(i);
                clock_gettime(CLOCK_MONOTONIC, &t);
                if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
                        break;
        }
}

int main(int argc, char **argv) {
        spin_function(argc > 1 ? atol(argv[1]) : 1000);
        return 0;
}
