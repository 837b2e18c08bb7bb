/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwinder.c: the table executor (x86-64 and aarch64). See docs/unwinding.md. */
#include "unwinder.h"

#include <string.h>

/* Highest plausible user-space address (57-bit virtual addresses); anything
 * above is a kernel address or a perf context marker. */
#define USER_ADDRESS_LIMIT (1ull << 56)

const char *unwind_stop_to_string(UnwindStop stop) {
        static const char *const names[_UNWIND_STOP_MAX] = {
                [UNWIND_STOP_END] = "end",
                [UNWIND_STOP_LIMIT] = "limit",
                [UNWIND_STOP_NO_INFO] = "no-info",
                [UNWIND_STOP_OUT_OF_STACK] = "out-of-stack",
                [UNWIND_STOP_BAD_SP] = "bad-sp",
                [UNWIND_STOP_BAD_IP] = "bad-ip",
                [UNWIND_STOP_NO_MAPPING] = "no-mapping",
        };
        return (unsigned) stop < _UNWIND_STOP_MAX ? names[stop] : NULL;
}

/* Loads the 8 bytes at addr from the copy; false when any byte is outside it. */
static inline bool stack_load(const UnwindStack *s, uint64_t addr, uint64_t *ret) {
        uint64_t off = addr - s->base;

        if (addr < s->base || s->size < 8 || off > s->size - 8)
                return false;
        memcpy(ret, s->data + off, 8);
        return true;
}

typedef struct FrameState {
        uint64_t ip, sp, fp;
        uint64_t lr; /* aarch64: x30 of this frame, when lr_valid */
        bool lr_valid;
        bool sp_unknown;   /* aarch64 after a frame-pointer step: sp is only a lower bound */
        bool a64;          /* aarch64 frames (regs->arch) */
        uint64_t pac_mask; /* aarch64: bits stripped from return addresses; 0 on x86-64 */
} FrameState;

static FrameState frame_state_init(const UnwindRegs *regs) {
        bool a64 = regs->arch == UNWIND_ARCH_AARCH64;

        return (FrameState){
                .ip = regs->ip,
                .sp = regs->sp,
                .fp = regs->fp,
                .lr = a64 ? regs->lr & ~regs->pac_mask : 0,
                .lr_valid = a64,
                .a64 = a64,
                .pac_mask = a64 ? regs->pac_mask : 0,
        };
}

static inline uint64_t reg_value(const FrameState *f, unsigned reg) {
        return reg == UNWIND_REG_SP ? f->sp : f->fp; /* the validator admits SP and FP only */
}

/* One frame-pointer step: caller's IP at fp+8, caller's FP at fp, CFA fp+16. */
static UnwindStop fp_step(const UnwindStack *s, FrameState *f) {
        uint64_t ra, caller_fp;

        if (f->fp < f->sp || f->fp < s->base)
                return UNWIND_STOP_NO_INFO;
        if (!stack_load(s, f->fp + 8, &ra) || !stack_load(s, f->fp, &caller_fp))
                return UNWIND_STOP_NO_INFO;
        f->sp = f->fp + 16;
        f->fp = caller_fp;
        f->ip = ra & ~f->pac_mask;
        f->lr_valid = false;
        /* x86-64's frame record sits at the top of the frame: fp + 16 is
         * the caller's SP. aarch64's sits anywhere in it (at the bottom,
         * after `stp x29, x30, [sp, -N]!`): the caller's SP is unknown. */
        f->sp_unknown = f->a64;
        return _UNWIND_STOP_MAX;
}

/* Whether a row reads SP (its CFA or a saved register based on it). */
static bool row_uses_sp(const UnwindRow *row) {
        return unwind_rule_reg(row->cfa) == UNWIND_REG_SP ||
               (unwind_rule_kind(row->ra) == UNWIND_SAVED_AT_REG && unwind_rule_reg(row->ra) == UNWIND_REG_SP) ||
               (unwind_rule_kind(row->fp) == UNWIND_SAVED_AT_REG && unwind_rule_reg(row->fp) == UNWIND_REG_SP);
}

/* Applies one validated row; returns _UNWIND_STOP_MAX to continue. */
static UnwindStop row_step(const UnwindRow *row, const UnwindStack *s, FrameState *f) {
        unsigned cfa_kind = unwind_rule_kind(row->cfa);
        uint64_t base = reg_value(f, unwind_rule_reg(row->cfa)), cfa, ra, fp = f->fp, ra_addr = 0, lr = 0;
        bool from_lr = false, lr_valid = false;

        switch (cfa_kind) {
        case UNWIND_CFA_REG_OFFSET:
                cfa = base + (uint64_t) (int64_t) row->cfa_offset;
                break;
        case UNWIND_CFA_DEREF:
                if (!stack_load(s, base + (uint64_t) (int64_t) row->cfa_offset, &cfa))
                        return UNWIND_STOP_OUT_OF_STACK;
                break;
        case UNWIND_CFA_PLT:
                cfa = base + (uint64_t) (int64_t) row->cfa_offset + ((f->ip & 15) >= (uint64_t) (row->flags >> 4) ? 8 : 0);
                break;
        default:
                return UNWIND_STOP_NO_INFO;
        }

        switch (unwind_rule_kind(row->ra)) {
        case UNWIND_SAVED_SAME:
                /* aarch64, the validator admits LR only: the return address
                 * is still in x30 (a leaf, or a prologue before its store).
                 * Only the sampled LR (or one a signal frame restored) is
                 * known; it is used once. */
                if (!f->lr_valid)
                        return UNWIND_STOP_NO_INFO;
                ra = f->lr;
                from_lr = true;
                break;
        case UNWIND_SAVED_AT_CFA:
                ra_addr = cfa + (uint64_t) (int64_t) row->ra_offset;
                if (!stack_load(s, ra_addr, &ra))
                        return UNWIND_STOP_OUT_OF_STACK;
                break;
        case UNWIND_SAVED_AT_REG:
                ra_addr = reg_value(f, unwind_rule_reg(row->ra)) + (uint64_t) (int64_t) row->ra_offset;
                if (!stack_load(s, ra_addr, &ra))
                        return UNWIND_STOP_OUT_OF_STACK;
                break;
        default: /* undefined: the outermost frame */
                return UNWIND_STOP_END;
        }

        switch (unwind_rule_kind(row->fp)) {
        case UNWIND_SAVED_SAME:
                break;
        case UNWIND_SAVED_AT_CFA:
                if (!stack_load(s, cfa + (uint64_t) (int64_t) row->fp_offset, &fp))
                        fp = 0;
                break;
        case UNWIND_SAVED_AT_REG:
                if (!stack_load(s, reg_value(f, unwind_rule_reg(row->fp)) + (uint64_t) (int64_t) row->fp_offset, &fp))
                        fp = 0;
                break;
        default:
                fp = 0;
                break;
        }

        if (row->flags & UNWIND_ROW_SIGNAL_FRAME) {
                /* The interrupted SP may be anywhere (sigaltstack), but it must move. */
                if (cfa == f->sp)
                        return UNWIND_STOP_BAD_SP;
                /* aarch64: the interrupted x30 lies just below its SP and PC
                 * in the sigcontext (regs[30], sp, pc): the interrupted
                 * function may be a leaf. */
                if (f->a64 && ra_addr >= 16 && stack_load(s, ra_addr - 16, &lr)) {
                        lr &= ~f->pac_mask;
                        lr_valid = true;
                }
        } else if (cfa < f->sp || (cfa == f->sp && !from_lr))
                return UNWIND_STOP_BAD_SP; /* a leaf's CFA may be its SP: LR is used once */
        f->sp = cfa;
        f->fp = fp;
        f->ip = ra & ~f->pac_mask;
        f->lr = lr;
        f->lr_valid = lr_valid;
        f->sp_unknown = false;
        return _UNWIND_STOP_MAX;
}

/* aarch64, the sampled frame (or one a signal interrupted: LR known) in a
 * file without CFI there (the vdso's
 * functions, code written without CFI): as libdw's aarch64 fallback (perf
 * --call-graph dwarf), take it for a leaf whose return address is still in
 * LR, SP and FP unchanged, unless LR is what its frame record holds (then
 * the frame-pointer step finds the same caller and a right SP). False to
 * leave the frame to the frame-pointer step. */
static bool leaf_guess(const UnwindStack *s, FrameState *f) {
        uint64_t saved;

        if (f->lr == 0 || f->lr >= USER_ADDRESS_LIMIT)
                return false;
        if (f->fp >= f->sp && stack_load(s, f->fp + 8, &saved) && (saved & ~f->pac_mask) == f->lr)
                return false;
        f->ip = f->lr;
        f->lr_valid = false;
        return true;
}

/* Why a walk stops at the caller's ip: END at 0 (the outermost frame),
 * BAD_IP outside user space; _UNWIND_STOP_MAX to go on. */
static UnwindStop next_ip_stop(uint64_t ip) {
        if (ip == 0)
                return UNWIND_STOP_END;
        if (ip >= USER_ADDRESS_LIMIT)
                return UNWIND_STOP_BAD_IP;
        return _UNWIND_STOP_MAX;
}

/* Whether ip (a return address) is in code whose table has a row with a
 * CFA rule for it: where a guessed frame must lead to be taken. */
static bool is_tabled_return(UnwindFindFunc find, void *userdata, const FrameState *f, uint64_t ip) {
        const UnwindTable *table = NULL;
        const UnwindRow *row;
        uint64_t offset = 0;
        bool jit = false;

        if (next_ip_stop(ip) != _UNWIND_STOP_MAX || !find(userdata, ip - 1, &table, &offset, &jit) || !table ||
            table->arch != (f->a64 ? UNWIND_ARCH_AARCH64 : UNWIND_ARCH_X86_64))
                return false;
        row = unwind_table_lookup(table, offset);
        return row && unwind_rule_kind(row->cfa) >= UNWIND_CFA_REG_OFFSET;
}

/* JIT code (no table by nature) reached by a return, SP exact: where its
 * frame pointer leads to no code, a trampoline that keeps none and only
 * aligns the stack around its call, as CPython's perf trampoline on x86-64
 * (Python/asm_trampoline.S: `sub $8, %rsp; call *%rcx`): the return
 * address at SP + 8, CFA SP + 16, FP unchanged. Taken only where the
 * caller's code has a table row for it. False to stop. */
static bool trampoline_step(const UnwindStack *s, FrameState *f, UnwindFindFunc find, void *userdata) {
        uint64_t ra;

        if (f->a64 || f->sp_unknown || !stack_load(s, f->sp + 8, &ra) || !is_tabled_return(find, userdata, f, ra))
                return false;
        f->sp += 16;
        f->ip = ra;
        return true;
}

/* Whether ip (a return address) is in any known code. */
static bool is_code(UnwindFindFunc find, void *userdata, uint64_t ip) {
        const UnwindTable *table;
        uint64_t offset;
        bool jit = false;

        return next_ip_stop(ip) == _UNWIND_STOP_MAX && find(userdata, ip - 1, &table, &offset, &jit);
}

/* A frame of JIT code: its frame pointer where it leads to code (V8 keeps
 * one), else, reached by a return (not the sampled frame, whose place in
 * the trampoline is unknown), the trampoline frame. */
static UnwindStop jit_step(const UnwindStack *s, FrameState *f, bool by_return, UnwindFindFunc find, void *userdata) {
        FrameState next = *f;

        if (fp_step(s, &next) == _UNWIND_STOP_MAX && is_code(find, userdata, next.ip)) {
                *f = next;
                return _UNWIND_STOP_MAX;
        }
        if (by_return && trampoline_step(s, f, find, userdata))
                return _UNWIND_STOP_MAX;
        return fp_step(s, f); /* as for any code without a row: the next lookup says where it leads */
}

void unwinder_unwind(const UnwindRegs *regs, const UnwindStack *stack, UnwindFindFunc find, void *userdata,
                     uint64_t *frames, size_t max_frames, UnwindResult *result) {
        FrameState f = frame_state_init(regs);
        bool exact_ip = true; /* the sampled IP and IPs restored by signal frames are not return addresses */
        UnwindStop stop;
        size_t n = 0;

        *result = (UnwindResult) {};
        if (max_frames == 0) {
                result->stop = UNWIND_STOP_LIMIT;
                return;
        }
        if (f.ip == 0 || f.ip >= USER_ADDRESS_LIMIT) {
                result->stop = UNWIND_STOP_BAD_IP;
                return;
        }
        frames[n++] = f.ip;

        for (;;) {
                const UnwindTable *table = NULL;
                const UnwindRow *row = NULL;
                uint64_t offset = 0, lookup_ip = exact_ip ? f.ip : f.ip - 1;
                bool signal = false, jit = false;

                if (n >= max_frames) {
                        stop = UNWIND_STOP_LIMIT;
                        break;
                }
                if (!find(userdata, lookup_ip, &table, &offset, &jit)) {
                        stop = UNWIND_STOP_NO_MAPPING;
                        n -= n > 1; /* a return address in no executable mapping was read past the last frame */
                        break;
                }
                /* a table of another architecture than the sample's is none */
                bool has_table = table && table->arch == (f.a64 ? UNWIND_ARCH_AARCH64 : UNWIND_ARCH_X86_64);
                if (has_table)
                        row = unwind_table_lookup(table, offset);
                /* aarch64 after a frame-pointer step: a row that needs SP
                 * would compute from a wrong one; frame records go on */
                if (row && f.sp_unknown && row_uses_sp(row))
                        row = NULL;
                if (row && unwind_rule_kind(row->cfa) >= UNWIND_CFA_REG_OFFSET) {
                        signal = row->flags & UNWIND_ROW_SIGNAL_FRAME;
                        stop = row_step(row, stack, &f);
                } else if (f.a64 && f.lr_valid && has_table && leaf_guess(stack, &f)) {
                        /* the sampled frame, or one a signal interrupted */
                        stop = _UNWIND_STOP_MAX;
                        result->n_fp_frames++;
                } else {
                        stop = jit && !table ? jit_step(stack, &f, !exact_ip, find, userdata) : fp_step(stack, &f);
                        if (stop == _UNWIND_STOP_MAX)
                                result->n_fp_frames++;
                }
                if (stop != _UNWIND_STOP_MAX)
                        break;
                stop = next_ip_stop(f.ip);
                if (stop != _UNWIND_STOP_MAX)
                        break;
                frames[n++] = f.ip;
                exact_ip = signal;
        }
        result->n_frames = n;
        result->stop = stop;
}

void unwinder_unwind_fp(const UnwindRegs *regs, const UnwindStack *stack, uint64_t *frames, size_t max_frames,
                        UnwindResult *result) {
        FrameState f = frame_state_init(regs);
        size_t n = 0;
        UnwindStop stop;

        *result = (UnwindResult) {};
        if (max_frames == 0 || f.ip == 0 || f.ip >= USER_ADDRESS_LIMIT) {
                result->stop = max_frames == 0 ? UNWIND_STOP_LIMIT : UNWIND_STOP_BAD_IP;
                return;
        }
        frames[n++] = f.ip;
        for (;;) {
                if (n >= max_frames) {
                        stop = UNWIND_STOP_LIMIT;
                        break;
                }
                stop = fp_step(stack, &f);
                if (stop != _UNWIND_STOP_MAX)
                        break;
                stop = next_ip_stop(f.ip);
                if (stop != _UNWIND_STOP_MAX)
                        break;
                result->n_fp_frames++;
                frames[n++] = f.ip;
        }
        result->n_frames = n;
        result->stop = stop;
}

bool unwinder_fp_leaf_caller(const UnwindRegs *regs, const UnwindRow *leaf_row, bool file_has_table,
                             uint64_t chain_next, uint64_t *ret) {
        uint64_t lr;

        if (regs->arch != UNWIND_ARCH_AARCH64)
                return false;
        lr = regs->lr & ~regs->pac_mask;
        if (next_ip_stop(lr) != _UNWIND_STOP_MAX)
                return false;
        if (leaf_row && unwind_rule_kind(leaf_row->cfa) >= UNWIND_CFA_REG_OFFSET) {
                if (leaf_row->ra != UNWIND_RULE(UNWIND_SAVED_SAME, UNWIND_REG_LR))
                        return false;
        } else if (!file_has_table || lr == chain_next)
                return false;
        *ret = lr;
        return true;
}
