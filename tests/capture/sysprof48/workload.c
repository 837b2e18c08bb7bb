/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload.c: the program of the Sysprof 48 fixture (make-sysprof48-fixture.sh).
 * Three functions of known names, one calling the next, burn the CPU for a
 * second (or argv[1] seconds); each is big enough and kept apart
 * (noinline, noclone) that its samples and frames are its own. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline, noclone)) unsigned long fixture_leaf_spin(unsigned long n) {
        unsigned long x = n;
        for (unsigned long i = 0; i < 200000; i++)
                x = x * 6364136223846793005UL + 1442695040888963407UL;
        return x;
}

__attribute__((noinline, noclone)) unsigned long fixture_middle_step(unsigned long n) {
        unsigned long x = fixture_leaf_spin(n);
        sink += x;
        return x ^ n;
}

__attribute__((noinline, noclone)) void fixture_outer_loop(double seconds) {
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        unsigned long n = 1;
        do {
                n = fixture_middle_step(n);
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while ((double) (now.tv_sec - start.tv_sec) + (double) (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv) {
        fixture_outer_loop(argc > 1 ? atof(argv[1]) : 1.0);
        return 0;
}
