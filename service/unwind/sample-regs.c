/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-regs.c: a sample's user registers for the unwinder (sample-regs.h). */
#include "sample-regs.h"

bool sample_unwind_has_regs(const PerfSample *s) {
        return s->regs_abi == PERF_SAMPLE_REGS_ABI_64 && s->n_regs == PERF_REGS_UNWIND_N && s->regs;
}

uint64_t sample_unwind_pac_mask(const ProcessMaps *maps, int32_t pid) {
        size_t n = 0;
        const ProcessMapping *m = maps ? process_maps_get(maps, pid, &n) : NULL;

        /* sorted by start: the last mapping ends highest */
        return n > 0 && m[n - 1].end > (1ull << 48) ? UNWIND_AARCH64_PAC_MASK_VA52 : UNWIND_AARCH64_PAC_MASK_VA48;
}

bool sample_unwind_regs(const PerfSample *s, const ProcessMaps *maps, UnwindRegs *ret) {
        PerfUnwindRegs r;

        if (!sample_unwind_has_regs(s) || !perf_regs_pick(PERF_REGS_UNWIND_MASK, s->regs, s->n_regs, &r))
                return false;
        *ret = (UnwindRegs){ .ip = r.ip, .sp = r.sp, .fp = r.fp, .lr = r.lr, .arch = UNWIND_ARCH_X86_64 };
#if defined(__aarch64__)
        ret->arch = UNWIND_ARCH_AARCH64;
        ret->pac_mask = sample_unwind_pac_mask(maps, (int32_t) s->pid);
#endif
        return true;
}
