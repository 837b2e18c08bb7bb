/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-noreturn.c: a call to a noreturn function is its caller's last
 * instruction, so the return address on the stack is the first byte of
 * whatever follows (here unrelated_next, built with -falign-functions=1
 * -fno-reorder-functions). A symbolizer that names return addresses as
 * they are says main → unrelated_next → run_forever; the right stack is
 * main → start_loop → run_forever → leaf_work. Runs for argv[1] seconds. */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;
static double deadline;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void leaf_work(void) {
        for (int i = 0; i < 100000; i++)
                sink += (unsigned long) i;
        if (now() > deadline)
                exit(0);
}

__attribute__((noinline, noreturn)) void run_forever(void) {
        for (;;)
                leaf_work();
}

__attribute__((noinline, noreturn)) void start_loop(void) {
        run_forever();
}

__attribute__((noinline)) void unrelated_next(void) {
        sink = 0;
}

int main(int argc, char **argv) {
        deadline = now() + (argc > 1 ? atof(argv[1]) : 1.0);
        if (argc > 2)
                unrelated_next();
        start_loop();
}
