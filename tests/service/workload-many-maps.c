/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-many-maps: maps every file named on the command line with
 * PROT_EXEC (each one is pinned by periscoped: one fd per file), then burns
 * CPU in a named chain for argv[1] milliseconds of CPU time, so a recording
 * of it makes the daemon start its helper while it holds thousands of fds.
 *   workload-many-maps MS FILE... */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t many_maps_sink;

static double cpu_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static uint64_t many_maps_leaf(uint64_t v) {
        for (int i = 0; i < 20000; i++)
                v = v * 6364136223846793005ull + 1442695040888963407ull;
        return v;
}

__attribute__((noinline)) static uint64_t many_maps_work(uint64_t v) {
        uint64_t r = many_maps_leaf(v);
        many_maps_sink = r;
        return r ^ v;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s MS FILE...\n", argv[0]);
                return 2;
        }
        double budget = atof(argv[1]);
        int mapped = 0;
        for (int i = 2; i < argc; i++) {
                int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        perror(argv[i]);
                        return 1;
                }
                void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
                close(fd);
                if (p == MAP_FAILED) {
                        perror("mmap");
                        return 1;
                }
                mapped++;
        }
        printf("mapped %d files\n", mapped);
        fflush(stdout);
        double start = cpu_ms();
        uint64_t v = 1;
        while (cpu_ms() - start < budget)
                v = many_maps_work(v);
        many_maps_sink = v;
        return 0;
}
