/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwinder: the executor on synthetic stacks with hand-made tables:
 * normal frames, FP-based and realigned frames, PLT, signal frames, the
 * frame-pointer fallback, and forged stacks (return addresses pointing
 * anywhere, loops, truncated copies) that must end the unwind cleanly.
 * Also the mapping set and the table cache the service keeps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "protocol.h"
#include "test-check.h"
#include "unwind-maps.h"
#include "unwind-table-cache.h"
#include "unwinder.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

/* Code layout of the synthetic module (file offsets = addresses - MOD_BASE):
 *   0x1000 leaf      CFA = SP+8
 *   0x1100 mid       CFA = SP+48, FP saved at CFA-16
 *   0x1200 fpframe   CFA = FP+16, RA at CFA-8, FP at CFA-16
 *   0x1300 realign   CFA = *(FP-8), RA at CFA-8, FP at FP+0
 *   0x1400 plt       CFA = SP+8 (+8 when (ip & 15) >= 11)
 *   0x1500 sigtramp  signal frame: CFA = *(SP+160), RA at SP+168, FP at SP+120
 *   0x1600 start     RA undefined (outermost)
 *   0x1700 no CFI (NONE): frame-pointer fallback
 *   0x1800 unsupported */
#define MOD_BASE 0x400000ull
#define MOD_END 0x402000ull
/* Anonymous executable memory (JIT code, CPython's perf trampolines), and
 * a file whose table could not be had: neither has a table. */
#define JIT_BASE 0x500000ull
#define JIT_END 0x501000ull
#define NOTAB_BASE 0x600000ull
#define NOTAB_END 0x601000ull

#define ROW(s, cfa_rule, cfa_reg, cfa_off, ra_rule, ra_reg, ra_off, fp_rule, fp_reg, fp_off, fl) \
        { .start = (s), .cfa = UNWIND_RULE(cfa_rule, cfa_reg), .cfa_offset = (cfa_off),      \
          .ra = UNWIND_RULE(ra_rule, ra_reg), .ra_offset = (ra_off),                          \
          .fp = UNWIND_RULE(fp_rule, fp_reg), .fp_offset = (fp_off), .flags = (fl) }

static struct {
        UnwindTableHeader h;
        UnwindRow rows[10];
} module = {
        .h = { .magic = UNWIND_TABLE_MAGIC, .version = UNWIND_TABLE_VERSION, .arch = UNWIND_ARCH_X86_64,
               .row_size = sizeof(UnwindRow), .n_rows = 10 },
        .rows = {
                ROW(0x1000, UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP, 8, UNWIND_SAVED_AT_CFA, 0, -8, UNWIND_SAVED_SAME, 0, 0, 0),
                ROW(0x1100, UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP, 48, UNWIND_SAVED_AT_CFA, 0, -8, UNWIND_SAVED_AT_CFA, 0, -16, 0),
                ROW(0x1200, UNWIND_CFA_REG_OFFSET, UNWIND_REG_FP, 16, UNWIND_SAVED_AT_CFA, 0, -8, UNWIND_SAVED_AT_CFA, 0, -16, 0),
                ROW(0x1300, UNWIND_CFA_DEREF, UNWIND_REG_FP, -8, UNWIND_SAVED_AT_CFA, 0, -8, UNWIND_SAVED_AT_REG, UNWIND_REG_FP, 0, 0),
                ROW(0x1400, UNWIND_CFA_PLT, UNWIND_REG_SP, 8, UNWIND_SAVED_AT_CFA, 0, -8, UNWIND_SAVED_SAME, 0, 0, 11 << 4),
                ROW(0x1500, UNWIND_CFA_DEREF, UNWIND_REG_SP, 160, UNWIND_SAVED_AT_REG, UNWIND_REG_SP, 168,
                    UNWIND_SAVED_AT_REG, UNWIND_REG_SP, 120, UNWIND_ROW_SIGNAL_FRAME),
                ROW(0x1600, UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP, 8, UNWIND_SAVED_UNDEFINED, 0, 0, UNWIND_SAVED_SAME, 0, 0, 0),
                { .start = 0x1700, .cfa = UNWIND_CFA_NONE },
                { .start = 0x1800, .cfa = UNWIND_CFA_UNSUPPORTED },
                { .start = 0x1900, .cfa = UNWIND_CFA_NONE },
        },
};

static UnwindTable table;
static UnwindMaps maps;

#define STACK_BASE 0x7ff000000000ull
#define STACK_WORDS 2048
static uint64_t stack_words[STACK_WORDS];

static void put(uint64_t addr, uint64_t value) {
        stack_words[(addr - STACK_BASE) / 8] = value;
}

static UnwindStack full_stack(void) {
        return (UnwindStack) { STACK_BASE, (const uint8_t *) stack_words, sizeof(stack_words) };
}

static void run(const UnwindRegs *regs, const UnwindStack *st, uint64_t *frames, size_t max, UnwindResult *res) {
        unwinder_unwind(regs, st, unwind_maps_find, &maps, frames, max, res);
}

/* leaf (SP = base) ← mid ← fpframe ← realign ← start, each frame described
 * by another kind of row: the registers at the leaf; fpframe's FP in
 * *ret_fp2. */
static UnwindRegs chain_stack(uint64_t *ret_fp2) {
        uint64_t sp0 = STACK_BASE;
        uint64_t sp1 = sp0 + 8;             /* mid's SP after leaf returns */
        uint64_t sp2 = sp1 + 48;            /* fpframe's SP */
        uint64_t fp2 = sp2 + 64;            /* fpframe's FP: CFA = fp2+16 */
        uint64_t sp3 = fp2 + 16;            /* realign's SP */
        uint64_t fp3 = sp3 + 96;            /* realign's FP; its CFA pointer at fp3-8 */
        uint64_t sp4 = sp3 + 256;           /* start's SP = realign's CFA */

        memset(stack_words, 0, sizeof(stack_words));
        put(sp0, MOD_BASE + 0x1110);        /* leaf's RA → mid */
        put(sp2 - 16, fp2);                 /* mid saved the FP of fpframe */
        put(sp2 - 8, MOD_BASE + 0x1220);    /* mid's RA → fpframe */
        put(fp2, fp3);                      /* fpframe saved realign's FP */
        put(fp2 + 8, MOD_BASE + 0x1330);    /* fpframe's RA → realign */
        put(fp3 - 8, sp4);                  /* realign's CFA */
        put(fp3, 0x1234);                   /* realign saved start's FP at FP+0 */
        put(sp4 - 8, MOD_BASE + 0x1640);    /* realign's RA → start */

        *ret_fp2 = fp2;
        return (UnwindRegs) { .ip = MOD_BASE + 0x1004, .sp = sp0, .fp = 0xdead };
}

/* Unwinds chain_stack()'s chain into at most max frames, from the whole
 * copy or (cut) from one that ends before fpframe's RA slot. */
static void run_chain(bool cut, uint64_t *frames, size_t max, UnwindResult *res) {
        uint64_t fp2;
        UnwindRegs regs = chain_stack(&fp2);
        UnwindStack st = full_stack();
        if (cut)
                st.size = (size_t) (fp2 + 8 - STACK_BASE);
        run(&regs, &st, frames, max, res);
}

TEST(chain) {
        uint64_t frames[16];
        UnwindResult res;
        run_chain(false, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_END, "chain stopped with %s", unwind_stop_to_string(res.stop));
        CHECK_MSG(res.n_frames == 5, "chain has %zu frames, expected 5", res.n_frames);
        if (res.n_frames == 5)
                CHECK_MSG(frames[0] == MOD_BASE + 0x1004 && frames[1] == MOD_BASE + 0x1110 && frames[2] == MOD_BASE + 0x1220 &&
                                  frames[3] == MOD_BASE + 0x1330 && frames[4] == MOD_BASE + 0x1640,
                          "wrong frames");
        CHECK_MSG(res.n_fp_frames == 0, "fallback used on a fully described chain");
}

/* The same chain with a frame limit. */
TEST(chain_frame_limit) {
        uint64_t frames[16];
        UnwindResult res;
        run_chain(false, frames, 3, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_LIMIT && res.n_frames == 3, "limit: %s %zu", unwind_stop_to_string(res.stop), res.n_frames);
}

/* Truncated copy: the RA slot of fpframe is beyond the copied bytes. */
TEST(chain_truncated_copy) {
        uint64_t frames[16];
        UnwindResult res;
        run_chain(true, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_OUT_OF_STACK && res.n_frames == 3, "truncated: %s %zu",
                  unwind_stop_to_string(res.stop), res.n_frames);
}

TEST(plt) {
        uint64_t frames[16];
        UnwindResult res;
        UnwindStack st = full_stack();
        uint64_t sp = STACK_BASE + 64;

        /* PLT: at offset 11 of a 16-byte entry the push has happened: CFA = SP+16. */
        memset(stack_words, 0, sizeof(stack_words));
        put(sp + 8, MOD_BASE + 0x1610);
        UnwindRegs regs = { .ip = MOD_BASE + 0x140b, .sp = sp };
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 2 && frames[1] == MOD_BASE + 0x1610 && res.stop == UNWIND_STOP_END, "PLT after push");
        put(sp, MOD_BASE + 0x1620);
        regs.ip = MOD_BASE + 0x1406;
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 2 && frames[1] == MOD_BASE + 0x1620, "PLT before push");
}

/* Signal frame: handler (leaf row) returns into the trampoline; the
 * interrupted IP is the first byte of "start" (0x1600): it must be looked up
 * exactly, not as a return address (0x15ff is the trampoline). */
TEST(signal_frame) {
        uint64_t frames[16];
        UnwindResult res;
        UnwindStack st = full_stack();
        uint64_t sp = STACK_BASE + 64;
        UnwindRegs regs;
        memset(stack_words, 0, sizeof(stack_words));
        uint64_t tramp_sp = sp + 8, interrupted_sp = sp + 1024;
        put(sp, MOD_BASE + 0x1501);                       /* handler's RA → trampoline */
        put(tramp_sp + 160, interrupted_sp);              /* uc_mcontext.rsp */
        put(tramp_sp + 168, MOD_BASE + 0x1600);           /* uc_mcontext.rip */
        put(tramp_sp + 120, 0x777);                       /* uc_mcontext.rbp */
        regs = (UnwindRegs) { .ip = MOD_BASE + 0x1000, .sp = sp };
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 3 && frames[1] == MOD_BASE + 0x1501 && frames[2] == MOD_BASE + 0x1600 &&
                          res.stop == UNWIND_STOP_END,
                  "signal frame: %zu frames, stop %s", res.n_frames, unwind_stop_to_string(res.stop));
}

TEST(fp_fallback) {
        uint64_t frames[16];
        UnwindResult res;
        UnwindStack st = full_stack();
        uint64_t fp1 = STACK_BASE + 32, fp2 = STACK_BASE + 128;

        /* Code without CFI at 0x1700 and in unmapped-table code; FP chain in the copy. */
        memset(stack_words, 0, sizeof(stack_words));
        put(fp1, fp2);
        put(fp1 + 8, MOD_BASE + 0x1711);
        put(fp2, 0);
        put(fp2 + 8, MOD_BASE + 0x1650);                  /* into "start": RA undefined there */
        UnwindRegs regs = { .ip = MOD_BASE + 0x1700, .sp = STACK_BASE, .fp = fp1 };
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 3 && res.n_fp_frames == 2 && res.stop == UNWIND_STOP_END, "fp fallback: %zu frames (%u fp) %s",
                  res.n_frames, res.n_fp_frames, unwind_stop_to_string(res.stop));

        /* Unsupported rows fall back too. */
        regs.ip = MOD_BASE + 0x1800;
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 3 && res.n_fp_frames == 2, "fallback from unsupported row");

        /* FP outside the copy: stop, no read. */
        regs.fp = 0x1000;
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 1 && res.stop == UNWIND_STOP_NO_INFO, "fp outside copy");
        /* FP below SP: stop. */
        regs = (UnwindRegs) { .ip = MOD_BASE + 0x1700, .sp = fp2, .fp = fp1 };
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 1 && res.stop == UNWIND_STOP_NO_INFO, "fp below sp");

        /* The fp-only walker. */
        regs = (UnwindRegs) { .ip = MOD_BASE + 0x1000, .sp = STACK_BASE, .fp = fp1 };
        unwinder_unwind_fp(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.n_frames == 3 && frames[2] == MOD_BASE + 0x1650, "fp walker: %zu", res.n_frames);
}

/* leaf ← a table-less frame at ret (JIT code: CPython's x86-64 perf
 * trampoline, `sub $8, %rsp; call *%rcx`, keeps no frame pointer) ← mid ←
 * start. The slot below the trampoline's return address holds a stale
 * address into fpframe, as its alignment padding may; FP is garbage. */
static UnwindRegs trampoline_stack(uint64_t ret) {
        uint64_t sp0 = STACK_BASE, sp1 = sp0 + 8, sp2 = sp1 + 16;

        memset(stack_words, 0, sizeof(stack_words));
        put(sp0, ret);                    /* leaf's RA → the trampoline */
        put(sp1, MOD_BASE + 0x1220);      /* stale padding */
        put(sp1 + 8, MOD_BASE + 0x1110);  /* the trampoline's RA → mid */
        put(sp2 + 32, 0x4321);            /* mid saved start's FP */
        put(sp2 + 40, MOD_BASE + 0x1640); /* mid's RA → start */
        return (UnwindRegs){ .ip = MOD_BASE + 0x1004, .sp = sp0, .fp = 0xdead };
}

TEST(jit_trampoline) {
        uint64_t frames[16];
        UnwindResult res;
        UnwindStack st = full_stack();
        UnwindRegs regs = trampoline_stack(JIT_BASE + 0x1a);

        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_END && res.n_frames == 4 && res.n_fp_frames == 1,
                  "trampoline: %zu frames (%u fp), %s", res.n_frames, res.n_fp_frames, unwind_stop_to_string(res.stop));
        if (res.n_frames == 4)
                CHECK_MSG(frames[1] == JIT_BASE + 0x1a && frames[2] == MOD_BASE + 0x1110 &&
                                  frames[3] == MOD_BASE + 0x1640,
                          "trampoline: wrong frames");

        /* A file without its table is not taken for a trampoline. */
        regs = trampoline_stack(NOTAB_BASE + 0x1a);
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 2, "no table, not JIT: %zu frames, %s",
                  res.n_frames, unwind_stop_to_string(res.stop));

        /* Nor is the sampled frame: where in the trampoline it is is unknown. */
        regs = trampoline_stack(JIT_BASE + 0x1a);
        regs = (UnwindRegs){ .ip = JIT_BASE + 0x16, .sp = STACK_BASE + 8, .fp = 0xdead };
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 1, "sampled in the trampoline: %zu frames, %s",
                  res.n_frames, unwind_stop_to_string(res.stop));

        /* JIT code that keeps a frame pointer (V8) goes by it. */
        uint64_t fpj = STACK_BASE + 512;
        regs = trampoline_stack(JIT_BASE + 0x1a);
        put(fpj, 0);
        put(fpj + 8, MOD_BASE + 0x1650);
        regs.fp = fpj;
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_END && res.n_frames == 3 && frames[2] == MOD_BASE + 0x1650,
                  "JIT with a frame pointer: %zu frames, %s", res.n_frames, unwind_stop_to_string(res.stop));
        /* Its frame pointer leading to no code: the trampoline's frame. */
        put(fpj + 8, 0x1234);
        run(&regs, &st, frames, 16, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_END && res.n_frames == 4 && frames[2] == MOD_BASE + 0x1110,
                  "frame pointer to nowhere: %zu frames, %s", res.n_frames, unwind_stop_to_string(res.stop));
}

TEST(jit_trampoline_hostile) {
        uint64_t frames[UNWINDER_MAX_FRAMES];
        UnwindResult res;
        UnwindStack st = full_stack();
        UnwindRegs regs;

        /* The trampoline's return address leads back into JIT code, with no
         * table to check a frame by: stop. */
        regs = trampoline_stack(JIT_BASE + 0x1a);
        put(STACK_BASE + 16, JIT_BASE + 0x1a);
        run(&regs, &st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 2, "trampoline into JIT: %zu frames, %s",
                  res.n_frames, unwind_stop_to_string(res.stop));

        /* Its return address slot beyond the copy: no read past it. */
        regs = trampoline_stack(JIT_BASE + 0x1a);
        UnwindStack short_st = { STACK_BASE, (const uint8_t *) stack_words, 16 };
        run(&regs, &short_st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 2, "trampoline past the copy: %zu frames, %s",
                  res.n_frames, unwind_stop_to_string(res.stop));

        /* FP outside the copy, and return addresses into JIT code wherever a
         * trampoline could look: stops at once. */
        regs = trampoline_stack(JIT_BASE + 0x1a);
        for (size_t i = 1; i < STACK_WORDS; i++)
                stack_words[i] = JIT_BASE + 0x1a;
        regs.fp = STACK_BASE + STACK_WORDS * 8 + 64;
        run(&regs, &st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 2, "fp outside, JIT everywhere: %zu frames, %s",
                  res.n_frames, unwind_stop_to_string(res.stop));

        /* A frame-pointer loop in JIT code: SP must rise, so it ends. */
        uint64_t x = STACK_BASE + 256;
        regs = trampoline_stack(JIT_BASE + 0x1a);
        put(x, x);
        put(x + 8, JIT_BASE + 0x2a);
        regs.fp = x;
        run(&regs, &st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 3 && frames[2] == JIT_BASE + 0x2a,
                  "fp loop in JIT: %zu frames, %s", res.n_frames, unwind_stop_to_string(res.stop));

        /* Trampolines and mid calling each other to the copy's end (every
         * 8 words: the trampoline's return into mid at word 2, the rest
         * returns into the trampoline): each frame rises, the end stops it. */
        for (size_t i = 0; i < STACK_WORDS; i++)
                stack_words[i] = i % 8 == 2 ? MOD_BASE + 0x1110 : JIT_BASE + 0x1a;
        regs = (UnwindRegs){ .ip = MOD_BASE + 0x1004, .sp = STACK_BASE, .fp = 0xdead };
        run(&regs, &st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.n_frames > STACK_WORDS / 8 * 2 - 4 && res.n_frames <= STACK_WORDS / 8 * 2 + 1 &&
                          res.stop != UNWIND_STOP_END && res.stop != UNWIND_STOP_LIMIT,
                  "trampolines all the way: %zu frames, %s", res.n_frames, unwind_stop_to_string(res.stop));
}

TEST(forged_stacks) {
        uint64_t frames[UNWINDER_MAX_FRAMES];
        UnwindResult res;
        size_t total = 0;

        /* A return address pointing at itself with the same SP: must stop. */
        memset(stack_words, 0, sizeof(stack_words));
        UnwindStack st = full_stack();
        for (size_t i = 0; i < STACK_WORDS; i++)
                stack_words[i] = MOD_BASE + 0x1001;       /* every slot "returns" into leaf */
        UnwindRegs regs = { .ip = MOD_BASE + 0x1000, .sp = STACK_BASE };
        run(&regs, &st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_LIMIT && res.n_frames == UNWINDER_MAX_FRAMES,
                  "endless stack: %zu frames, %s", res.n_frames, unwind_stop_to_string(res.stop));
        /* The same with fewer words than the limit: ends at the copy's end. */
        UnwindStack small = { STACK_BASE, (const uint8_t *) stack_words, 100 * 8 };
        run(&regs, &small, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_OUT_OF_STACK && res.n_frames == 101,
                  "self-returning stack: %zu frames, %s", res.n_frames, unwind_stop_to_string(res.stop));

        /* Frame pointers forming a loop: SP must advance, so it stops. */
        memset(stack_words, 0, sizeof(stack_words));
        put(STACK_BASE + 64, STACK_BASE + 64);
        put(STACK_BASE + 72, MOD_BASE + 0x1711);
        regs = (UnwindRegs) { .ip = MOD_BASE + 0x1700, .sp = STACK_BASE, .fp = STACK_BASE + 64 };
        run(&regs, &st, frames, UNWINDER_MAX_FRAMES, &res);
        CHECK_MSG(res.stop == UNWIND_STOP_NO_INFO && res.n_frames == 2, "fp loop: %zu frames %s", res.n_frames,
                  unwind_stop_to_string(res.stop));

        /* Random stacks whose words point anywhere, often into the module. */
        for (int round = 0; round < 20000; round++) {
                size_t words = (size_t) (rng() % STACK_WORDS);
                for (size_t i = 0; i < words; i++) {
                        switch (rng() % 4) {
                        case 0:
                                stack_words[i] = rng() % 4 ? MOD_BASE + rng() % 0x1a00 : JIT_BASE + rng() % 0x1000;
                                break;
                        case 1:
                                stack_words[i] = STACK_BASE + rng() % (STACK_WORDS * 8 + 64);
                                break;
                        case 2:
                                stack_words[i] = rng();
                                break;
                        default:
                                stack_words[i] = 0;
                        }
                }
                UnwindStack s = { STACK_BASE, (const uint8_t *) stack_words, words * 8 + rng() % 8 };
                regs = (UnwindRegs) { .ip = MOD_BASE + rng() % 0x1a00, .sp = STACK_BASE, .fp = stack_words[rng() % STACK_WORDS] };
                if (rng() % 8 == 0)
                        regs.sp = rng();
                run(&regs, &s, frames, UNWINDER_MAX_FRAMES, &res);
                CHECK_MSG(res.n_frames <= UNWINDER_MAX_FRAMES && (unsigned) res.stop < _UNWIND_STOP_MAX, "forged result");
                for (size_t f = 1; f < res.n_frames; f++)
                        CHECK_MSG(frames[f] != 0 && frames[f] < (1ull << 56), "forged stack produced a kernel/zero address");
                total += res.n_frames;
        }
        CHECK_MSG(total > 20000, "forged stacks never unwound a frame (%zu)", total);
}

TEST(maps) {
        UnwindMaps m = {};
        const UnwindTable *t;
        uint64_t off;
        bool jit = false;

        CHECK_MSG(unwind_maps_add(&m, 0x1000, 0x5000, 0x0, &table) == 0, "add");
        CHECK_MSG(unwind_maps_add(&m, 0x8000, 0x9000, 0x2000, NULL) == 0, "add");
        CHECK_MSG(unwind_maps_find(&m, 0x1234, &t, &off, &jit) && t == &table && off == 0x234, "find first");
        CHECK_MSG(unwind_maps_find(&m, 0x8010, &t, &off, &jit) && t == NULL && off == 0x2010, "find second");
        CHECK_MSG(!unwind_maps_find(&m, 0x6000, &t, &off, &jit), "find gap");
        /* A new mapping over the middle splits the old one. */
        CHECK_MSG(unwind_maps_add(&m, 0x2000, 0x3000, 0x10000, NULL) == 0, "overlay");
        CHECK_MSG(m.n_mappings == 4, "split into %zu", m.n_mappings);
        CHECK_MSG(unwind_maps_find(&m, 0x2500, &t, &off, &jit) && t == NULL && off == 0x10500, "overlay find");
        CHECK_MSG(unwind_maps_find(&m, 0x3500, &t, &off, &jit) && t == &table && off == 0x2500,
                  "tail keeps its file offset");
        CHECK_MSG(unwind_maps_remove(&m, 0x0, 0x2800) == 0, "remove");
        CHECK_MSG(!unwind_maps_find(&m, 0x1500, &t, &off, &jit) && !unwind_maps_find(&m, 0x2500, &t, &off, &jit),
                  "removed");
        CHECK_MSG(unwind_maps_find(&m, 0x2900, &t, &off, &jit) && off == 0x10900, "partial remove keeps the rest");
        unwind_maps_set_table(&m, 0x8000, 0x9000, &table);
        CHECK_MSG(unwind_maps_find(&m, 0x8010, &t, &off, &jit) && t == &table, "set table");
        for (size_t i = 1; i < m.n_mappings; i++)
                CHECK_MSG(m.mappings[i].start >= m.mappings[i - 1].end, "maps overlap");
        unwind_maps_clear(&m);
}

TEST(table_cache) {
        UnwindTableCache c = {};
        UnwindFileKey a = { .dev = 1, .ino = 2, .build_id_len = 2, .build_id = { 0xab, 0xcd } };
        UnwindFileKey b = a;
        const UnwindTable *t;
        const char *reason;
        void *blob;

        b.build_id[1] = 0xce;
        CHECK_MSG(!unwind_table_cache_get(&c, &a, &t), "empty cache hit");
        blob = malloc(sizeof(module));
        memcpy(blob, &module, sizeof(module));
        CHECK_MSG(unwind_table_cache_put(&c, &a, blob, sizeof(module), &t, &reason) == 0 && t && t->n_rows == 10, "put good");
        CHECK_MSG(unwind_table_cache_get(&c, &a, &t) && t && t->n_rows == 10, "get good");
        /* Same inode, different build-id: another file (rebuilt in place). */
        blob = calloc(1, 64);
        CHECK_MSG(unwind_table_cache_put(&c, &b, blob, 64, &t, &reason) < 0 && !t && reason, "garbage accepted");
        CHECK_MSG(unwind_table_cache_get(&c, &b, &t) && t == NULL, "rejected file not remembered");
        CHECK_MSG(unwind_table_cache_get(&c, &a, &t) && t, "first file lost");
        unwind_table_cache_clear(&c);
}

int main(int argc, char **argv) {
        const char *reason;

        if (unwind_table_validate(&module, sizeof(module), &table, &reason) < 0) {
                fprintf(stderr, "FAIL: synthetic module table: %s\n", reason);
                return 1;
        }
        if (unwind_maps_add(&maps, MOD_BASE, MOD_END, 0, &table) < 0 ||
            unwind_maps_add_jit(&maps, JIT_BASE, JIT_END) < 0 ||
            unwind_maps_add(&maps, NOTAB_BASE, NOTAB_END, 0, NULL) < 0)
                return 1;
        int r = test_main(argc, argv);
        unwind_maps_clear(&maps);
        return r;
}
