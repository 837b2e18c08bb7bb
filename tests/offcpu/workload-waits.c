/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-waits: the main thread computes for a second, sleeps a second
 * in nanosleep, waits a second on a pipe another thread writes later, and
 * a second on a mutex another thread holds; each in a function of its own
 * (off_cpu_compute, off_cpu_sleep, off_cpu_pipe_wait, off_cpu_mutex_wait)
 * so an off-CPU profile can attribute each wait. Prints each phase's
 * measured wall-clock length in ns, `phase NAME NS`, and the CPU time the
 * main thread got in it, `cpu NAME NS` (a busy machine preempts it). argv[1]: seconds per
 * phase (default 1). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double phase_s = 1.0;
static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t holder_ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t holder_ready = PTHREAD_COND_INITIALIZER;
static int holding;
static volatile unsigned long sink;

static long long now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void sleep_ns(long long ns) {
        struct timespec ts = { ns / 1000000000ll, ns % 1000000000ll };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

__attribute__((noinline)) static void off_cpu_compute(void) {
        long long end = now_ns() + (long long) (phase_s * 1e9);
        while (now_ns() < end)
                for (int i = 0; i < 10000; i++)
                        sink += (unsigned long) i * 7;
}

__attribute__((noinline)) static void off_cpu_sleep(void) {
        sleep_ns((long long) (phase_s * 1e9));
}

static void *writer_thread(void *arg) {
        pthread_setname_np(pthread_self(), "pipe-writer");
        sleep_ns((long long) (phase_s * 1e9));
        char c = 'x';
        if (write(pipe_fds[1], &c, 1) != 1)
                abort();
        return NULL;
}

__attribute__((noinline)) static void off_cpu_pipe_wait(void) {
        char c;
        if (read(pipe_fds[0], &c, 1) != 1)
                abort();
}

/* The writer thread around the wait, not in it: joining it (when it has
 * not exited yet, as under emulation) blocks in futex_wait, no part of
 * the pipe wait. */
static void pipe_phase(void) {
        pthread_t t;
        if (pthread_create(&t, NULL, writer_thread, NULL) != 0)
                abort();
        off_cpu_pipe_wait();
        pthread_join(t, NULL);
}

static void *holder_thread(void *arg) {
        pthread_setname_np(pthread_self(), "lock-holder");
        pthread_mutex_lock(&lock);
        pthread_mutex_lock(&holder_ready_lock);
        holding = 1;
        pthread_cond_signal(&holder_ready);
        pthread_mutex_unlock(&holder_ready_lock);
        sleep_ns((long long) (phase_s * 1e9));
        pthread_mutex_unlock(&lock);
        return NULL;
}

__attribute__((noinline)) static void off_cpu_mutex_wait(void) {
        pthread_t t;
        if (pthread_create(&t, NULL, holder_thread, NULL) != 0)
                abort();
        pthread_mutex_lock(&holder_ready_lock);
        while (!holding)
                pthread_cond_wait(&holder_ready, &holder_ready_lock);
        pthread_mutex_unlock(&holder_ready_lock);
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
        pthread_join(t, NULL);
}

static long long thread_cpu_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void phase(const char *name, void (*f)(void)) {
        long long t0 = now_ns(), c0 = thread_cpu_ns();
        f();
        long long c1 = thread_cpu_ns();
        printf("phase %s %lld\n", name, now_ns() - t0);
        printf("cpu %s %lld\n", name, c1 - c0);
        fflush(stdout);
}

int main(int argc, char **argv) {
        if (argc > 1)
                phase_s = atof(argv[1]);
        if (phase_s <= 0 || phase_s > 60 || pipe(pipe_fds) < 0)
                return 2;
        phase("compute", off_cpu_compute);
        phase("sleep", off_cpu_sleep);
        phase("pipe", pipe_phase);
        phase("mutex", off_cpu_mutex_wait);
        return 0;
}
