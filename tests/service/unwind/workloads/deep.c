/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* deep: a chain of functions with different frame sizes and alloca:
 * main → chain_a (64-byte array) → chain_b (alloca) → chain_c (4 KiB array)
 * → chain_d (registers only) → leaf_work (hot loop). */
#include <alloca.h>
#include <string.h>

#include "workload-common.h"

volatile uint64_t workload_sink;

NOINLINE static uint64_t leaf_work(uint64_t seed) {
        uint64_t x = seed;
        for (int i = 0; i < 20000; i++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
        return x;
}

NOINLINE static uint64_t chain_d(uint64_t v) {
        uint64_t r = leaf_work(v);
        workload_sink = r;
        return r ^ v;
}

NOINLINE static uint64_t chain_c(uint64_t v) {
        volatile char big[4096];
        big[v % sizeof(big)] = (char) v;
        uint64_t r = chain_d(v + big[(v * 7) % sizeof(big)]);
        return r + big[v % sizeof(big)];
}

NOINLINE static uint64_t chain_b(uint64_t v, size_t n) {
        char *buf = alloca(n);
        memset(buf, (int) v, n);
        __asm__ volatile("" : : "r"(buf) : "memory");
        uint64_t r = chain_c(v + (uint64_t) buf[n / 2]);
        return r + (uint64_t) buf[0];
}

NOINLINE static uint64_t chain_a(uint64_t v) {
        volatile uint64_t small[8];
        small[v % 8] = v;
        uint64_t r = chain_b(v, 64 + (v % 512));
        return r + small[v % 8];
}

int main(int argc, char **argv) {
        double budget = workload_budget_ms(argc, argv, 600), start = workload_cpu_ms();
        uint64_t v = 1;

        while (workload_cpu_ms() - start < budget)
                for (int i = 0; i < 50; i++)
                        v = chain_a(v);
        workload_sink = v;
        return 0;
}
