/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built with -fno-asynchronous-unwind-tables -fno-unwind-tables
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer: no CFI, frame
 * pointers only (as Fedora builds). */
#include "workload-common.h"

/* Holds a local in memory: GCC 12 gives even leaf functions a frame then. */
NOINLINE static uint64_t fp_leaf(uint64_t v) {
        volatile uint64_t acc = v;
        for (int i = 0; i < 20000; i++)
                acc = acc * 6364136223846793005ull + 1442695040888963407ull;
        return acc;
}

NOINLINE static uint64_t fp_inner(uint64_t v) {
        uint64_t r = fp_leaf(v);
        workload_sink = r;
        return r + 3;
}

NOINLINE uint64_t fp_outer(uint64_t v) {
        uint64_t r = fp_inner(v);
        workload_sink = r;
        return r + 2;
}
