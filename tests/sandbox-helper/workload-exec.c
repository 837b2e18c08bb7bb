/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-exec.c: spins in before_exec_spin for argv[1] seconds of its own
 * CPU time (as many samples on a loaded machine as on a quiet one), then
 * execs argv[2..] (another program): every sample of its first image is
 * taken before the exec that replaced all of its mappings. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void before_exec_spin(double seconds) {
        double end = now() + seconds;
        while (now() < end)
                for (int i = 0; i < 100000; i++)
                        sink += (unsigned long) i;
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: %s SECONDS PROGRAM [ARGS...]\n", argv[0]);
                return 2;
        }
        before_exec_spin(atof(argv[1]));
        execv(argv[2], argv + 2);
        perror("execv");
        return 127;
}
