/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demo-workload.c: a small CPU-bound program with a known call structure,
 * built with frame pointers, used by run.sh and the service tests:
 *
 *   main → run_workload → outer_a → middle_b → inner_c   (about 3/4 of the time)
 *                                  → middle_d → inner_e   (about 1/4)
 *
 * Options: -t MS (CPU time to burn, default 1000: CPU time, not wall time,
 * so a loaded machine still yields about MS samples at 1 kHz), -c N (fork and
 * exec N children of this same program first, each burning -t/4 ms; they
 * show up in a capture as processes of their own). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

/* Called at the end of each inner function so that they are not leaf
 * functions: GCC omits the frame pointer of leaves, which would hide their
 * caller from a frame-pointer unwinder. */
NOINLINE static void publish(uint64_t x) {
        sink = x;
}

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

NOINLINE static uint64_t inner_c(uint64_t x) {
        for (int i = 0; i < 200000; i++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
        publish(x);
        return x;
}

NOINLINE static uint64_t inner_e(uint64_t x) {
        for (int i = 0; i < 200000; i++)
                x ^= (x << 13) ^ (x >> 7) ^ (x << 17);
        publish(x);
        return x;
}

NOINLINE static uint64_t middle_b(uint64_t x) {
        x = inner_c(x) + 1;
        x = inner_c(x) + 1;
        return inner_c(x) + 1;
}

NOINLINE static uint64_t middle_d(uint64_t x) {
        return inner_e(x) + 1;
}

NOINLINE static uint64_t outer_a(uint64_t x) {
        x = middle_b(x);
        return middle_d(x) + 1;
}

NOINLINE static uint64_t run_workload(int64_t ms) {
        int64_t end = now_ms() + ms;
        uint64_t x = 1;
        while (now_ms() < end)
                x = outer_a(x);
        return x;
}

static int spawn_children(const char *argv0, int n, int64_t ms) {
        char arg[32], self[4096];
        /* Exec the real path, not /proc/self/exe: the kernel names the new
         * program (its comm) after the file it executes. */
        ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (len <= 0)
                return -errno;
        self[len] = 0;
        snprintf(arg, sizeof(arg), "%lld", (long long) (ms / 4 > 0 ? ms / 4 : 1));
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                if (pid < 0)
                        return -errno;
                if (pid == 0) {
                        execl(self, argv0, "-t", arg, (char *) NULL);
                        _exit(127);
                }
                int status;
                if (waitpid(pid, &status, 0) < 0)
                        return -errno;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        return -ECHILD;
        }
        return 0;
}

int main(int argc, char **argv) {
        int64_t ms = 1000;
        int children = 0, c;
        while ((c = getopt(argc, argv, "t:c:")) >= 0) {
                switch (c) {
                case 't':
                        ms = strtoll(optarg, NULL, 10);
                        break;
                case 'c':
                        children = atoi(optarg);
                        break;
                default:
                        fprintf(stderr, "Usage: demo-workload [-t MS] [-c CHILDREN]\n");
                        return 2;
                }
        }
        if (children > 0) {
                int r = spawn_children(argv[0], children, ms);
                if (r < 0) {
                        fprintf(stderr, "demo-workload: children failed: %s\n", strerror(-r));
                        return 1;
                }
        }
        run_workload(ms);
        return 0;
}
