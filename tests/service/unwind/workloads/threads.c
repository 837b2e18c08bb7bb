/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* threads: three worker threads and the main thread burn CPU in different
 * chains: worker_main → worker_mid → worker_leaf, main → main_loop → main_leaf. */
#include <pthread.h>

#include "workload-common.h"

volatile uint64_t workload_sink;
static double budget, start;

NOINLINE static uint64_t worker_leaf(uint64_t v) {
        for (int i = 0; i < 20000; i++)
                v = v * 6364136223846793005ull + 1442695040888963407ull;
        return v;
}

NOINLINE static uint64_t worker_mid(uint64_t v) {
        uint64_t r = worker_leaf(v);
        workload_sink = r;
        return r + 1;
}

NOINLINE static void *worker_main(void *arg) {
        uint64_t v = (uint64_t) (uintptr_t) arg;
        while (workload_cpu_ms() - start < budget)
                for (int i = 0; i < 50; i++)
                        v = worker_mid(v);
        workload_sink = v;
        return NULL;
}

NOINLINE static uint64_t main_leaf(uint64_t v) {
        for (int i = 0; i < 20000; i++)
                v = v * 2862933555777941757ull + 3037000493ull;
        return v;
}

NOINLINE static uint64_t main_loop(uint64_t v) {
        while (workload_cpu_ms() - start < budget)
                for (int i = 0; i < 50; i++)
                        v = main_leaf(v) + 1;
        return v;
}

int main(int argc, char **argv) {
        pthread_t t[3];

        budget = workload_budget_ms(argc, argv, 1200);
        start = workload_cpu_ms();
        for (int i = 0; i < 3; i++)
                if (pthread_create(&t[i], NULL, worker_main, (void *) (uintptr_t) (i + 1)) != 0)
                        return 1;
        workload_sink = main_loop(7);
        for (int i = 0; i < 3; i++)
                pthread_join(t[i], NULL);
        return 0;
}
