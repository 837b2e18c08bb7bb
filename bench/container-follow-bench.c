/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-follow-bench.c: what the membership rescans of `record
 * --container` (service/container-follow.c) cost per tick. Starts N extra
 * sleeping processes (argument, default 1000) so /proc holds many, then
 * times the first scan (classifies every process) and 100 later ones
 * (one /proc/PID/stat read each), for a query that matches nothing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "container-follow.h"

static int never_joined(pid_t pid, void *userdata) {
        return 0;
}

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static size_t count_processes(void) {
        size_t n = 0;
        FILE *f = popen("ls /proc | grep -c '^[0-9]'", "re");
        if (f && fscanf(f, "%zu", &n) != 1)
                n = 0;
        if (f)
                pclose(f);
        return n;
}

int main(int argc, char **argv) {
        int extra = argc > 1 ? atoi(argv[1]) : 1000;
        pid_t *kids = calloc((size_t) (extra > 0 ? extra : 1), sizeof(pid_t));
        if (!kids)
                return 1;
        for (int i = 0; i < extra; i++) {
                kids[i] = fork();
                if (kids[i] == 0) {
                        pause();
                        _exit(0);
                }
        }
        Resolver *r = NULL;
        ContainerFollow *f = NULL;
        if (resolver_new(&r) < 0 || container_follow_new("no-such-container-bench", &f) < 0)
                return 1;
        size_t n = count_processes();
        double t0 = now_us();
        int k = container_follow_scan(f, r, never_joined, NULL);
        double first = now_us() - t0;
        double best = 1e18, sum = 0;
        const int rounds = 100;
        for (int i = 0; i < rounds && k >= 0; i++) {
                double a = now_us();
                k = container_follow_scan(f, r, never_joined, NULL);
                double d = now_us() - a;
                sum += d;
                if (d < best)
                        best = d;
        }
        printf("processes: %zu\nfirst scan (classifies all): %.0f us\nlater scans: mean %.0f us, best %.0f us "
               "(%.2f us per process); at 5 scans/s: %.2f%% of one CPU\n",
               n, first, sum / rounds, best, n ? sum / rounds / (double) n : 0, sum / rounds * 5 / 1e4);
        for (int i = 0; i < extra; i++)
                if (kids[i] > 0) {
                        kill(kids[i], SIGKILL);
                        waitpid(kids[i], NULL, 0);
                }
        container_follow_free(f);
        resolver_free(r);
        free(kids);
        return k < 0;
}
