/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-pingpong: two threads pass a byte back and forth over two pipes
 * for argv[1] seconds (default 2): a storm of context switches. Prints
 * `round_trips N per_second R`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static volatile int stop;

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void *echo(void *arg) {
        char c;
        pthread_setname_np(pthread_self(), "pong");
        while (read(ping[0], &c, 1) == 1) {
                if (c == 'q')
                        break;
                if (write(pong[1], &c, 1) != 1)
                        abort();
        }
        return NULL;
}

int main(int argc, char **argv) {
        double seconds = argc > 1 ? atof(argv[1]) : 2;
        pthread_t t;
        char c = 'p';
        if (seconds <= 0 || pipe(ping) < 0 || pipe(pong) < 0 || pthread_create(&t, NULL, echo, NULL) != 0)
                return 2;
        unsigned long n = 0;
        double start = now_s(), end = start + seconds;
        while ((n & 1023) != 0 || now_s() < end) {
                if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
                        return 1;
                n++;
        }
        double took = now_s() - start;
        c = 'q';
        if (write(ping[1], &c, 1) != 1)
                return 1;
        pthread_join(t, NULL);
        printf("round_trips %lu per_second %.0f\n", n, (double) n / took);
        return 0;
}
