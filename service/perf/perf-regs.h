/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-regs.h: the user registers perf samples on the architecture
 * periscoped runs on (PERF_SAMPLE_REGS_USER): the ones every served event
 * may ask for, the ones the unwinders need, and picking those out of a
 * sample whatever mask it was taken with. x86-64: bp, sp, ip (bits 6-8 of
 * 24). arm64: x29, x30 (LR), sp, pc (bits 29-32 of x0-x30, sp, pc); never VG
 * (bit 46) or other extended registers: with SVE a mask with VG makes a
 * software event such as cpu-clock fail with EOPNOTSUPP. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#if defined(__aarch64__)
#define PERF_REGS_USER_MASK ((1ull << 33) - 1) /* x0-x30, sp, pc (PERF_REG_ARM64_MAX) */
#define PERF_REGS_UNWIND_MASK ((1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))
#define PERF_REGS_UNWIND_N 4
#elif defined(__x86_64__)
#define PERF_REGS_USER_MASK ((1ull << 24) - 1) /* PERF_REG_X86_64_MAX */
#define PERF_REGS_UNWIND_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))
#define PERF_REGS_UNWIND_N 3
#else
#error "periscoped samples user registers on x86-64 and aarch64 only"
#endif

/* What the unwinders need of a sample's user registers (lr: aarch64 only). */
typedef struct PerfUnwindRegs {
        uint64_t ip, sp, fp, lr;
} PerfUnwindRegs;

/* Picks the unwinders' registers out of regs (n_regs values, one for each
 * bit of mask, in bit order). False when mask lacks one of them or regs is
 * shorter than mask says. */
bool perf_regs_pick(uint64_t mask, const uint64_t *regs, uint64_t n_regs, PerfUnwindRegs *ret);

/* The same picked into PERF_REGS_UNWIND_N values in the order of
 * PERF_REGS_UNWIND_MASK, as a sample taken with that mask holds them. */
bool perf_regs_pick_unwind_order(uint64_t mask, const uint64_t *regs, uint64_t n_regs,
                                 uint64_t ret[PERF_REGS_UNWIND_N]);
