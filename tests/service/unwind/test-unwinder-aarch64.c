/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwinder-aarch64: the aarch64 unwinder on x86_64, from register and
 * stack vectors captured once under qemu-aarch64-static with gdb-multiarch
 * (aarch64/make-vectors.sh): the table compiled from the checked-in program
 * (aarch64/chain-NAME), executed over the copied stack, must give gdb's own
 * backtrace, and every frame must name the program's chain through main:
 * a call-free leaf whose return address is still in LR, a frame-pointer
 * build, a pointer-authentication build (signed return addresses on the
 * stack; gdb over qemu 7.2 knows no PAC mask and stops at the first signed
 * one, so past it the names are the check), and a signal frame that
 * interrupted a leaf. Also the frame-pointer mode's leaf fix-up, and the
 * sandboxed helper compiling the same table (PERISCOPE_HELPER).
 * The vectors' folder is AARCH64_VECTORS (meson). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aarch64-vectors.h"
#include "basic.h"
#include "helper-client.h"
#include "protocol.h"
#include "test-check.h"
#include "unwind-compile.h"

/* Unwinds vector NAME-WHERE over program chain-NAME and checks gdb's pcs
 * (PAC bits stripped) and the names through main. */
static void check_vector(const char *dir, const char *name, const char *where, const char *const *chain) {
        _cleanup_free_ char *path = NULL, *file = NULL;
        Vector v;
        Program p;
        uint64_t frames[64];
        UnwindResult res;
        size_t n_chain = 0;
        int r;

        if (asprintf(&path, "%s/%s-%s.vec", dir, name, where) < 0 || asprintf(&file, "chain-%s", name) < 0)
                abort();
        r = vector_load(path, &v);
        if (r < 0) {
                fail("%s: cannot read the vector: %s", path, strerror(-r));
                return;
        }
        r = program_load(dir, file, &p);
        if (r < 0) {
                fail("%s: no aarch64 table: %s", file, strerror(-r));
                program_done(&p);
                free(v.stack);
                return;
        }

        UnwindRegs regs = vector_regs(&v);
        UnwindStack stack = { .base = v.stack_base, .data = v.stack, .size = v.stack_size };
        Finder finder = { &v, &p };
        unwinder_unwind(&regs, &stack, finder_find, &finder, frames, ELEMENTSOF(frames), &res);

        /* gdb's own backtrace, its signed addresses stripped */
        for (size_t i = 0; i < v.n_expect; i++) {
                uint64_t want = v.expect[i] & ~UNWIND_AARCH64_PAC_MASK_VA48;
                CHECK_MSG(i < res.n_frames && frames[i] == want, "%s-%s: frame %zu is %#" PRIx64 ", gdb says %#" PRIx64,
                          name, where, i, i < res.n_frames ? frames[i] : 0, want);
        }
        /* every frame through main names the chain */
        while (chain[n_chain])
                n_chain++;
        bool exact = true;
        for (size_t i = 0; i < n_chain; i++) {
                const char *got = "(none)";
                if (i < res.n_frames) {
                        const Map *m = find_map(&v, frames[i]);
                        /* a return address names the call before it; the sampled
                         * pc and the pc a signal frame restores are exact */
                        uint64_t a = exact ? frames[i] : frames[i] - 1;
                        got = m && strcmp(m->file, file) == 0 ? program_name(&p, a - m->start + m->pgoff)
                                                              : "(elsewhere)";
                        /* the handler returns to the trampoline itself; the byte
                         * before it is the nop a backtrace looks up (no symbol) */
                        if (m && strcmp(got, "??") == 0)
                                got = program_name(&p, frames[i] - m->start + m->pgoff);
                        exact = strcmp(got, "__kernel_rt_sigreturn") == 0;
                }
                CHECK_MSG(strcmp(got, chain[i]) == 0, "%s-%s: frame %zu is %s, want %s (stopped: %s after %zu)", name,
                          where, i, got, chain[i], unwind_stop_to_string(res.stop), res.n_frames);
        }
        printf("%s-%s: %zu frames, %s, gdb's %zu match\n", name, where, res.n_frames, unwind_stop_to_string(res.stop),
               v.n_expect);

        if (strcmp(where, "leaf") == 0) {
                /* Frame-pointer mode: the x29 chain skips the leaf's caller
                 * (f1) when the leaf built no frame record; the leaf's row
                 * says so, and the fix-up puts the sampled LR back. */
                uint64_t fp_frames[64], caller;
                UnwindResult fp_res;
                const Map *m = find_map(&v, v.pc);
                const UnwindRow *row = m ? unwind_table_lookup(&p.table, v.pc - m->start + m->pgoff) : NULL;

                unwinder_unwind_fp(&regs, &stack, fp_frames, ELEMENTSOF(fp_frames), &fp_res);
                CHECK_MSG(unwinder_fp_leaf_caller(&regs, row, true, fp_res.n_frames > 1 ? fp_frames[1] : 0, &caller),
                          "%s: the leaf's row does not say LR", name);
                CHECK_MSG(caller == (v.expect[1] & ~UNWIND_AARCH64_PAC_MASK_VA48), "%s: the leaf's caller is %#" PRIx64,
                          name, caller);
                /* without CFI at the leaf, in a file that has a table: perf's
                 * guess, LR when it is not what the chain has next */
                uint64_t guessed = 0;
                CHECK_MSG(
                        unwinder_fp_leaf_caller(&regs, NULL, true, fp_res.n_frames > 1 ? fp_frames[1] : 0, &guessed) &&
                                guessed == caller,
                        "%s: no guess without CFI", name);
                /* ... but none in code without any table (JIT code), nor where
                 * LR is what the chain has, nor where the row says it was saved */
                CHECK(!unwinder_fp_leaf_caller(&regs, NULL, false, fp_res.n_frames > 1 ? fp_frames[1] : 0, &guessed));
                CHECK(!unwinder_fp_leaf_caller(&regs, NULL, true, caller, &guessed));
                UnwindRow saved = { .cfa = UNWIND_RULE(UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP),
                                    .cfa_offset = 16,
                                    .ra = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0),
                                    .ra_offset = -8 };
                CHECK(!unwinder_fp_leaf_caller(&regs, &saved, true, 0, &guessed));
                if (strcmp(name, "fp") == 0) {
                        /* the chain gives leaf, f2, f3, main: f1 missing, the seed's problem */
                        CHECK_MSG(fp_res.n_frames >= 4 && fp_frames[1] == v.expect[2] && fp_frames[2] == v.expect[3] &&
                                          fp_frames[3] == v.expect[4],
                                  "fp: the frame-pointer chain is not leaf, f2, f3, main (%zu frames)",
                                  fp_res.n_frames);
                        CHECK(caller != fp_frames[1]);
                }
        }
        program_done(&p);
        free(v.stack);
}

/* A table with no CFI at all (one NONE row), as the vdso's is outside its
 * sigreturn row. */
static const struct {
        UnwindTableHeader h;
        UnwindRow rows[1];
} no_cfi_blob = {
        .h = { .magic = UNWIND_TABLE_MAGIC,
               .version = UNWIND_TABLE_VERSION,
               .arch = UNWIND_ARCH_AARCH64,
               .row_size = sizeof(UnwindRow),
               .n_rows = 1 },
        .rows = { { .start = 0, .cfa = UNWIND_CFA_NONE } },
};

/* The frame-pointer build's leaf vector over a program whose table has no
 * CFI: the sampled frame is taken for a leaf (caller = LR, as libdw's
 * aarch64 fallback does), then the frame records give gdb's chain; without
 * the guess f1 would be missing. */
TEST(frame_pointer_leaf_without_cfi) {
        Vector v;
        Program p;
        UnwindTable t;
        uint64_t frames[64];
        UnwindResult res;
        int r = vector_load(AARCH64_VECTORS "/fp-leaf.vec", &v);

        CHECK_MSG(r == 0, "fp-leaf.vec: %s", strerror(-r));
        if (r < 0)
                return;
        CHECK(unwind_table_validate(&no_cfi_blob, sizeof(no_cfi_blob), &t, NULL) == 0);
        p = (Program){ .table = t, .fd = -1 };
        snprintf(p.file, sizeof(p.file), "chain-fp");
        UnwindRegs regs = vector_regs(&v);
        UnwindStack stack = { .base = v.stack_base, .data = v.stack, .size = v.stack_size };
        Finder finder = { &v, &p };
        unwinder_unwind(&regs, &stack, finder_find, &finder, frames, ELEMENTSOF(frames), &res);
        for (size_t i = 0; i < v.n_expect; i++)
                CHECK_MSG(i < res.n_frames && frames[i] == v.expect[i], "frame %zu is %#" PRIx64 ", gdb says %#" PRIx64,
                          i, i < res.n_frames ? frames[i] : 0, v.expect[i]);
        printf("fp-leaf without CFI: %zu frames, %u by frame records or the leaf guess\n", res.n_frames,
               res.n_fp_frames);
        free(v.stack);
}

/* aarch64 after a frame-pointer step (JIT code, no table): the caller's SP
 * is unknown (frame records sit at the bottom of aarch64 frames), so an
 * SP-based row must not run from fp + 16; the frame records go on. */
#define JIT_BASE 0x7f0000000000ull
#define MOD_BASE 0x550000000000ull
static const struct {
        UnwindTableHeader h;
        UnwindRow rows[2];
} sp_row_blob = {
        .h = { .magic = UNWIND_TABLE_MAGIC,
               .version = UNWIND_TABLE_VERSION,
               .arch = UNWIND_ARCH_AARCH64,
               .row_size = sizeof(UnwindRow),
               .n_rows = 2 },
        .rows = { { .start = 0x100,
                    .cfa = UNWIND_RULE(UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP),
                    .cfa_offset = 48,
                    .ra = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0),
                    .ra_offset = -8,
                    .fp = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0),
                    .fp_offset = -16 },
                  { .start = 0x1000, .cfa = UNWIND_CFA_NONE } },
};

static bool synthetic_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit) {
        const UnwindTable *t = userdata;
        if (ip >= JIT_BASE && ip < JIT_BASE + 0x1000) {
                *table = NULL; /* JIT code */
                *jit = true;
                *offset = ip - JIT_BASE;
                return true;
        }
        if (ip >= MOD_BASE && ip < MOD_BASE + 0x1000) {
                *table = t;
                *offset = ip - MOD_BASE;
                return true;
        }
        return false;
}

TEST(sp_unknown_after_frame_pointer_step) {
        UnwindTable t;
        uint64_t words[32] = {}, frames[16];
        const uint64_t sp = 0x7ffc00000000ull;
        UnwindResult res;

        CHECK(unwind_table_validate(&sp_row_blob, sizeof(sp_row_blob), &t, NULL) == 0);
        /* the JIT frame's record at sp + 0x20: the caller's fp and pc */
        words[0x20 / 8] = sp + 0x60;
        words[0x28 / 8] = MOD_BASE + 0x104;
        /* what the SP-based row would read from fp + 16: CFA sp + 0x60, RA at sp + 0x58 */
        words[0x58 / 8] = MOD_BASE + 0x999;
        /* the module frame's own record at sp + 0x60: the outermost */
        words[0x60 / 8] = 0;
        words[0x68 / 8] = 0;
        UnwindRegs regs = { .ip = JIT_BASE + 0x10,
                            .sp = sp,
                            .fp = sp + 0x20,
                            .lr = JIT_BASE + 0x40,
                            .arch = UNWIND_ARCH_AARCH64,
                            .pac_mask = UNWIND_AARCH64_PAC_MASK_VA48 };
        UnwindStack stack = { .base = sp, .data = (const uint8_t *) words, .size = sizeof(words) };
        unwinder_unwind(&regs, &stack, synthetic_find, &t, frames, ELEMENTSOF(frames), &res);
        CHECK_MSG(res.n_frames == 2 && frames[1] == MOD_BASE + 0x104 && res.stop == UNWIND_STOP_END,
                  "%zu frames (the second %#" PRIx64 "), stopped %s", res.n_frames, res.n_frames > 1 ? frames[1] : 0,
                  unwind_stop_to_string(res.stop));
        /* x86-64's fp + 16 is the caller's SP: the row runs there */
        regs.arch = UNWIND_ARCH_X86_64;
        regs.pac_mask = 0;
        UnwindTable x86 = t;
        x86.arch = UNWIND_ARCH_X86_64;
        unwinder_unwind(&regs, &stack, synthetic_find, &x86, frames, ELEMENTSOF(frames), &res);
        CHECK_MSG(res.n_frames >= 3 && frames[2] == MOD_BASE + 0x999, "x86-64 did not run the row after fp + 16");
}

static const char *const leaf_chain[] = { "leaf", "f1", "f2", "f3", "main", NULL };
static const char *const signal_chain[] = { "handler_leaf", "on_signal", "__kernel_rt_sigreturn", "spin_leaf", "spin",
                                            "main",         NULL };

TEST(no_frame_pointer_leaf) {
        check_vector(AARCH64_VECTORS, "nofp", "leaf", leaf_chain);
}

TEST(frame_pointer_leaf) {
        check_vector(AARCH64_VECTORS, "fp", "leaf", leaf_chain);
}

TEST(pac_leaf) {
        check_vector(AARCH64_VECTORS, "pac", "leaf", leaf_chain);
}

TEST(no_frame_pointer_signal) {
        check_vector(AARCH64_VECTORS, "nofp", "signal", signal_chain);
}

TEST(frame_pointer_signal) {
        check_vector(AARCH64_VECTORS, "fp", "signal", signal_chain);
}

TEST(pac_signal) {
        check_vector(AARCH64_VECTORS, "pac", "signal", signal_chain);
}

/* The sandboxed helper (bwrap) compiles the aarch64 programs' tables byte
 * for byte as the in-process compiler does, and they validate. */
TEST(helper_compiles_aarch64) {
        HelperClient *helper = NULL;
        int r = helper_client_new(&(HelperClientConfig){}, &helper);

        CHECK_MSG(r >= 0, "cannot start the helper: %s", strerror(-r));
        if (r < 0)
                return;
        static const char *const names[] = { "chain-nofp", "chain-fp", "chain-pac" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                const char *name = names[i];
                _cleanup_free_ char *path = NULL, *why = NULL;
                _cleanup_free_ void *blob = NULL, *local = NULL;
                _cleanup_close_ int fd = -1;
                size_t size = 0, local_size = 0;
                UnwindTable t;
                const char *reason = NULL;

                if (asprintf(&path, "%s/%s", AARCH64_VECTORS, name) < 0)
                        abort();
                fd = open(path, O_RDONLY | O_CLOEXEC);
                CHECK_MSG(fd >= 0, "%s: %m", path);
                if (fd < 0)
                        continue;
                r = helper_client_compile_unwind(helper, fd, NULL, 0, &blob, &size, &why);
                CHECK_MSG(r >= 0, "the helper did not compile %s: %s", name, why ? why : strerror(-r));
                if (r < 0)
                        continue;
                CHECK_MSG(unwind_table_validate(blob, size, &t, &reason) == 0 && t.arch == UNWIND_ARCH_AARCH64,
                          "%s: the helper's table: %s", name, reason ? reason : "not aarch64");
                CHECK(unwind_compile_fd(fd, &local, &local_size, NULL) == 0);
                CHECK_MSG(local && size == local_size && memcmp(blob, local, size) == 0,
                          "%s: the helper's table differs from the in-process one", name);
        }
        helper_client_free(helper);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
