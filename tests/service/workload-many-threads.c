/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-many-threads: starts N idle threads (small stacks, each blocked
 * in a read of a pipe nobody writes), prints "ready" and waits to be
 * killed: a program with thousands of threads, as a thread storm's target
 * (test-thread-budget.sh). Usage: workload-many-threads N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int pipe_fds[2];

static void *idle_thread(void *arg) {
        char c;
        (void) arg;
        while (read(pipe_fds[0], &c, 1) < 0)
                ;
        return NULL;
}

int main(int argc, char **argv) {
        long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
        if (n <= 0 || n > 100000) {
                fprintf(stderr, "usage: %s N (1…100000 threads)\n", argv[0]);
                return 2;
        }
        if (pipe(pipe_fds) < 0) {
                perror("pipe");
                return 1;
        }
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        for (long i = 0; i < n; i++) {
                pthread_t t;
                int r = pthread_create(&t, &attr, idle_thread, NULL);
                if (r != 0) {
                        fprintf(stderr, "thread %ld: pthread_create failed (%d)\n", i, r);
                        return 1;
                }
        }
        printf("ready\n");
        fflush(stdout);
        for (;;)
                pause();
}
