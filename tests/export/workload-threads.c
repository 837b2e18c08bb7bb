/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-threads.c: named threads burning known functions, for the
 * thread-name tests. The main thread is "main-loop" and burns main_burn;
 * "worker-1" burns worker_one_burn; the third thread starts as "starting",
 * burns starting_burn for the first half, then renames itself "worker-2"
 * and burns worker_two_burn. These burn for SECONDS (argv[1], default 2) of
 * CPU time each. worker-1 first starts a thread that never names itself
 * (it inherits "worker-1") and burns inherited_burn for SECONDS / 4. Each
 * prints its tid as "tid NAME TID" ("tid inherited TID"). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double seconds = 2.0;

static double cpu_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

#define BURNER(name, k)                                                                                                \
        __attribute__((noinline)) static unsigned long name(double until) {                                            \
                volatile unsigned long x = 0;                                                                          \
                while (cpu_now() < until)                                                                              \
                        for (int i = 0; i < 100000; i++)                                                               \
                                x += (unsigned long) i * k;                                                            \
                return x;                                                                                              \
        }

/* different constants: the compiler cannot fold them into one */
BURNER(main_burn, 3u)
BURNER(worker_one_burn, 5u)
BURNER(starting_burn, 7u)
BURNER(worker_two_burn, 11u)
BURNER(inherited_burn, 13u)

static void say_tid(const char *name) {
        printf("tid %s %d\n", name, (int) gettid());
        fflush(stdout);
}

static void *inherited(void *arg) {
        say_tid("inherited");
        inherited_burn(cpu_now() + seconds / 4);
        return NULL;
}

static void *worker_one(void *arg) {
        pthread_setname_np(pthread_self(), "worker-1");
        say_tid("worker-1");
        pthread_t child;
        if (pthread_create(&child, NULL, inherited, NULL) != 0)
                exit(1);
        worker_one_burn(cpu_now() + seconds);
        pthread_join(child, NULL);
        return NULL;
}

static void *worker_two(void *arg) {
        pthread_setname_np(pthread_self(), "starting");
        say_tid("starting");
        double start = cpu_now();
        starting_burn(start + seconds / 2);
        prctl(PR_SET_NAME, "worker-2"); /* renamed mid-run */
        worker_two_burn(start + seconds);
        return NULL;
}

int main(int argc, char **argv) {
        if (argc > 1)
                seconds = atof(argv[1]);
        pthread_setname_np(pthread_self(), "main-loop");
        say_tid("main-loop");
        pthread_t a, b;
        if (pthread_create(&a, NULL, worker_one, NULL) != 0 || pthread_create(&b, NULL, worker_two, NULL) != 0)
                return 1;
        main_burn(cpu_now() + seconds);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        return 0;
}
