/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-vdso.c: spends its time in the vdso (clock_gettime, served
 * without a system call) for argv[1] seconds. */
#include <stdlib.h>
#include <time.h>

volatile long sink;

__attribute__((noinline)) static double read_clock(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        double end = read_clock() + (argc > 1 ? atof(argv[1]) : 1.0);
        while (read_clock() < end)
                sink++;
        return 0;
}
