/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-export.c: a CPU-bound program with known names and shares for
 * the export tests: main → run_rounds → hot_heavy (3/4 of the work) and
 * hot_light (1/4), both spending it in mix_inline, which is always inlined,
 * so nearly every sample has an inline frame; and kernel_zero, which reads
 * /dev/zero so some samples have kernel frames. The shares are counted in
 * loop iterations, not time, so they hold on a loaded machine. Argument:
 * milliseconds to run. */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static long now_us(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static inline __attribute__((always_inline)) void mix_inline(unsigned long i) {
        for (int k = 0; k < 500; k++)
                sink = sink * 2654435761u + i + (unsigned long) k;
}

__attribute__((noinline)) void hot_heavy(unsigned long n) {
        for (unsigned long i = 0; i < n; i++)
                mix_inline(i);
}

__attribute__((noinline)) void hot_light(unsigned long n) {
        for (unsigned long i = 0; i < n; i++)
                mix_inline(i ^ 0x5555);
}

__attribute__((noinline)) void kernel_zero(int fd) {
        static char buf[256 * 1024];
        if (read(fd, buf, sizeof(buf)) < 0)
                abort();
}

__attribute__((noinline)) void run_rounds(long ms) {
        int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        if (zero < 0)
                abort();
        long end = now_us() + ms * 1000L;
        while (now_us() < end) {
                hot_heavy(3 * 400);
                hot_light(400);
                kernel_zero(zero);
        }
        close(zero);
        sink++; /* not a tail call: run_rounds stays on the stack */
}

int main(int argc, char **argv) {
        run_rounds(argc > 1 ? atol(argv[1]) : 1000);
        return 0;
}
