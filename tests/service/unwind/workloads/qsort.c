/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* qsort: a call through libc back into the program: the stack must read
 * compare_items → qsort internals → sort_items → main. */
#include <stdlib.h>

#include "workload-common.h"

volatile uint64_t workload_sink;

#define N_ITEMS 20000

NOINLINE static int compare_items(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        /* Some work per comparison so the comparator is hot. */
        for (int i = 0; i < 8; i++) {
                x = x * 2862933555777941757ull + 3037000493ull;
                y = y * 2862933555777941757ull + 3037000493ull;
        }
        return (x > y) - (x < y);
}

NOINLINE static void sort_items(uint64_t *items, size_t n) {
        qsort(items, n, sizeof(*items), compare_items);
        workload_sink = items[n / 2];
}

NOINLINE static void fill_items(uint64_t *items, size_t n, uint64_t seed) {
        for (size_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ull + 1;
                items[i] = seed >> 11;
        }
        workload_sink = items[0];
}

int main(int argc, char **argv) {
        double budget = workload_budget_ms(argc, argv, 600), start = workload_cpu_ms();
        uint64_t *items = malloc(N_ITEMS * sizeof(uint64_t));
        uint64_t seed = 42;

        if (!items)
                return 1;
        while (workload_cpu_ms() - start < budget) {
                fill_items(items, N_ITEMS, seed++);
                sort_items(items, N_ITEMS);
        }
        free(items);
        return 0;
}
