/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fallback: main has CFI and no frame pointer; fp_outer → fp_inner → fp_leaf
 * (fallback-fp.c) have frame pointers and no .eh_frame at all, so the
 * unwinder must fall back to the frame pointer there and still reach main. */
#include "workload-common.h"

volatile uint64_t workload_sink;

uint64_t fp_outer(uint64_t v);

int main(int argc, char **argv) {
        double budget = workload_budget_ms(argc, argv, 600), start = workload_cpu_ms();
        uint64_t v = 5;

        while (workload_cpu_ms() - start < budget)
                for (int i = 0; i < 50; i++)
                        v = fp_outer(v) + 1;
        workload_sink = v;
        return 0;
}
