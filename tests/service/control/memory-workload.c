/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory-workload.c: a program with a known leak and known temporaries for
 * the memory profiler test. It prints "pid PID base 0xBASE" (its load
 * address, so the test can name its functions) and does, exactly:
 *   leak_site:      25 x malloc(4096), never freed      = 102400 bytes
 *   leak_in_thread: 2 threads x 10 x calloc(10, 10)      = 2000 bytes, never freed
 *   temp_site:      1000 x malloc(512), freed at once
 *   grow_site:      realloc from 16 to 65536 bytes, then freed
 *   aligned_site:   posix_memalign(64, 1000) + aligned_alloc(128, 1024), freed
 *   peak_site:      malloc(10 MiB), touched, freed */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload-announce.h"

static void *volatile leaked[64];
static void *volatile sink;

__attribute__((noinline)) static void leak_site(int i) {
        leaked[i] = malloc(4096);
        memset(leaked[i], i, 4096);
}

__attribute__((noinline)) static void *leak_in_thread(void *arg) {
        int base = (int) (long) arg;
        for (int i = 0; i < 10; i++) {
                leaked[base + i] = calloc(10, 10);
                sink = leaked[base + i];
        }
        return NULL;
}

__attribute__((noinline)) static void temp_site(void) {
        for (int i = 0; i < 1000; i++) {
                char *p = malloc(512);
                p[0] = (char) i;
                sink = p;
                free(p);
        }
}

__attribute__((noinline)) static void grow_site(void) {
        char *p = NULL;
        for (size_t n = 16; n <= 65536; n *= 2) {
                p = realloc(p, n);
                p[n - 1] = 1;
        }
        sink = p;
        free(p);
}

__attribute__((noinline)) static void aligned_site(void) {
        void *p = NULL;
        if (posix_memalign(&p, 64, 1000) != 0)
                exit(1);
        sink = p;
        free(p);
        p = aligned_alloc(128, 1024);
        sink = p;
        free(p);
}

__attribute__((noinline)) static void peak_site(void) {
        char *p = malloc(10 << 20);
        memset(p, 1, 10 << 20);
        sink = p;
        free(p);
}

int main(void) {
        if (workload_announce(main) < 0)
                return 1;
        for (int i = 0; i < 25; i++)
                leak_site(i);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
                pthread_create(&t[i], NULL, leak_in_thread, (void *) (long) (30 + 10 * i));
        for (int i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
        temp_site();
        grow_site();
        aligned_site();
        peak_site();
        return 0;
}
