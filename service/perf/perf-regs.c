/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-regs.c: the unwinders' registers out of a sample's user registers. */
#include "perf-regs.h"

/* The value of register `bit` in regs taken with mask. */
static bool reg_at(uint64_t mask, const uint64_t *regs, uint64_t n_regs, unsigned bit, uint64_t *ret) {
        uint64_t index;

        if (!regs || !(mask & (1ull << bit)))
                return false;
        index = (uint64_t) __builtin_popcountll(mask & ((1ull << bit) - 1));
        if (index >= n_regs)
                return false;
        *ret = regs[index];
        return true;
}

bool perf_regs_pick_unwind_order(uint64_t mask, const uint64_t *regs, uint64_t n_regs,
                                 uint64_t ret[PERF_REGS_UNWIND_N]) {
        unsigned i = 0;

        for (unsigned bit = 0; bit < 64; bit++) {
                if (!(PERF_REGS_UNWIND_MASK & (1ull << bit)))
                        continue;
                if (!reg_at(mask, regs, n_regs, bit, &ret[i++]))
                        return false;
        }
        return true;
}

bool perf_regs_pick(uint64_t mask, const uint64_t *regs, uint64_t n_regs, PerfUnwindRegs *ret) {
        uint64_t v[PERF_REGS_UNWIND_N];

        if (!perf_regs_pick_unwind_order(mask, regs, n_regs, v))
                return false;
#if defined(__aarch64__)
        *ret = (PerfUnwindRegs){ .fp = v[0], .lr = v[1], .sp = v[2], .ip = v[3] };
#else
        *ret = (PerfUnwindRegs){ .fp = v[0], .sp = v[1], .ip = v[2] };
#endif
        return true;
}
