/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwinder.h: executes validated unwind tables (capture/unwind-table.h) over
 * a copy of a thread's user stack, as perf's REGS_USER + STACK_USER deliver
 * it, and yields the user part of a call chain. It never reads memory other
 * than the copy: every load is bounds-checked against it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#define UNWINDER_MAX_FRAMES 1024

typedef struct UnwindRegs {
        uint64_t ip, sp, fp; /* x86-64: rip, rsp, rbp; aarch64: pc, sp, x29 */
        uint64_t lr;         /* aarch64: x30 as sampled (the leaf's return address) */
        UnwindArch arch;     /* 0 or UNWIND_ARCH_X86_64: x86-64; UNWIND_ARCH_AARCH64 */
        uint64_t pac_mask;   /* aarch64: bits cleared from every return address (PAC) */
} UnwindRegs;

/* The conservative aarch64 PAC masks: everything above a 48-bit user
 * address space, or a 52-bit one for a process with code above 2^48
 * (docs/unwinding.md, "aarch64"). */
#define UNWIND_AARCH64_PAC_MASK_VA48 (~((1ull << 48) - 1))
#define UNWIND_AARCH64_PAC_MASK_VA52 (~((1ull << 52) - 1))

/* The copied stack: bytes [base, base + size) of the thread's address space. */
typedef struct UnwindStack {
        uint64_t base;
        const uint8_t *data;
        size_t size;
} UnwindStack;

/* Finds the code containing ip: sets *table (NULL when the code has no table,
 * e.g. JIT code) and *offset (ip as a file offset in that code's file), and
 * *jit (false on entry) when the code is anonymous executable memory (JIT
 * code, a runtime's trampolines), which has no table by nature. Returns
 * false when ip lies in no known executable mapping. */
typedef bool (*UnwindFindFunc)(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit);

typedef enum UnwindStop {
        UNWIND_STOP_END,               /* reached the outermost frame (return address undefined or 0) */
        UNWIND_STOP_LIMIT,             /* frame limit */
        UNWIND_STOP_NO_INFO,           /* no table row and no usable frame pointer */
        UNWIND_STOP_OUT_OF_STACK,      /* a load fell outside the copied stack */
        UNWIND_STOP_BAD_SP,            /* the stack pointer did not advance */
        UNWIND_STOP_BAD_IP,            /* return address outside user space */
        UNWIND_STOP_NO_MAPPING,        /* IP in no known mapping */
        _UNWIND_STOP_MAX,
} UnwindStop;

typedef struct UnwindResult {
        size_t n_frames;               /* addresses written, the sampled IP first */
        UnwindStop stop;
        unsigned n_fp_frames; /* frames found without a table row: the frame-pointer
                                        * fallback and the JIT trampoline step */
} UnwindResult;

/* Unwinds from regs over stack, writing at most max_frames addresses to
 * frames: the sampled IP, then each caller's return address. Never fails:
 * the result says how far it got and why it stopped. */
void unwinder_unwind(const UnwindRegs *regs, const UnwindStack *stack, UnwindFindFunc find, void *userdata,
                     uint64_t *frames, size_t max_frames, UnwindResult *result);

/* Frame-pointer-only walk (the `fp` unwind mode and the fallback's building
 * block), with the same bounds checks. */
void unwinder_unwind_fp(const UnwindRegs *regs, const UnwindStack *stack, uint64_t *frames, size_t max_frames,
                        UnwindResult *result);

/* aarch64 frame-pointer mode: the leaf's caller that a frame-pointer chain
 * (the kernel's, or unwinder_unwind_fp()) skips while the leaf at regs->ip
 * has not stored its return address yet. leaf_row is the row covering
 * regs->ip in the table of the leaf's file (NULL when the table has none,
 * or the code has no table); chain_next is the chain's address after the
 * leaf (0 when none). Returns true with the caller's return address
 * (regs->lr, PAC bits stripped): where the row says the return address is
 * still in LR; and, with no CFI for regs->ip in a file that has a table
 * (file_has_table: the vdso, code written without CFI), where LR differs
 * from chain_next, as perf's libdw-based leaf fix-up guesses. Code without
 * any table (JIT code, which keeps frame records) gets no guess. */
bool unwinder_fp_leaf_caller(const UnwindRegs *regs, const UnwindRow *leaf_row, bool file_has_table,
                             uint64_t chain_next, uint64_t *ret);

/* "end", "limit", ... for logs and statistics. */
const char *unwind_stop_to_string(UnwindStop stop);
