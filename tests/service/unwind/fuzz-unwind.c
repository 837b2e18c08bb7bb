/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-unwind: libFuzzer target over what the service does with untrusted
 * bytes: unwind_table_validate() on a table blob from the helper, then, when
 * it passes, unwinder_unwind() over a forged register set and stack copy.
 *
 * Input: u16 table size, the table blob, 24 bytes of registers (ip, sp, fp),
 * then the stack copy. The table covers a module mapped at MODULE_BASE.
 * Built with clang -fsanitize=fuzzer by fuzz.sh; without libFuzzer (the gcc
 * sanitizer build) main() below replays mutated seeds deterministically. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "unwind-maps.h"
#include "unwinder.h"

#define MODULE_BASE 0x400000ull
#define MODULE_SIZE 0x100000ull
#define JIT_BASE 0x800000ull       /* a mapping without a table: FP fallback */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static uint64_t frames[UNWINDER_MAX_FRAMES];
        UnwindMaps maps = {};
        UnwindTable table;
        uint16_t table_size;
        uint64_t regs[3];
        void *blob;

        if (size < 2)
                return 0;
        memcpy(&table_size, data, 2);
        data += 2;
        size -= 2;
        if (table_size > size)
                table_size = (uint16_t) size;
        /* The service receives blobs in malloc'ed (aligned) buffers. */
        blob = malloc(table_size ? table_size : 1);
        if (!blob)
                return 0;
        memcpy(blob, data, table_size);
        data += table_size;
        size -= table_size;
        if (unwind_table_validate(blob, table_size, &table, NULL) == 0) {
                (void) unwind_table_lookup(&table, 0);
                if (size >= sizeof(regs)) {
                        memcpy(regs, data, sizeof(regs));
                        data += sizeof(regs);
                        size -= sizeof(regs);
                        UnwindRegs r = { .ip = regs[0], .sp = regs[1], .fp = regs[2] };
                        if (table.arch == UNWIND_ARCH_AARCH64) {
                                /* LR from the bits the other registers leave */
                                r = (UnwindRegs){ .ip = regs[0],
                                                  .sp = regs[1],
                                                  .fp = regs[2],
                                                  .lr = regs[0] ^ regs[2],
                                                  .arch = UNWIND_ARCH_AARCH64,
                                                  .pac_mask = UNWIND_AARCH64_PAC_MASK_VA48 };
                                uint64_t caller;
                                const UnwindRow *row =
                                        r.ip >= MODULE_BASE ? unwind_table_lookup(&table, r.ip - MODULE_BASE) : NULL;
                                (void) unwinder_fp_leaf_caller(&r, row, true, regs[1], &caller);
                        }
                        UnwindStack st = { .base = r.sp, .data = data, .size = size };
                        UnwindResult res;
                        if (unwind_maps_add(&maps, MODULE_BASE, MODULE_BASE + MODULE_SIZE, 0, &table) == 0 &&
                            unwind_maps_add_jit(&maps, JIT_BASE, JIT_BASE + MODULE_SIZE) == 0) {
                                unwinder_unwind(&r, &st, unwind_maps_find, &maps, frames, UNWINDER_MAX_FRAMES, &res);
                                if (res.n_frames > UNWINDER_MAX_FRAMES || (unsigned) res.stop >= _UNWIND_STOP_MAX)
                                        abort();
                                unwinder_unwind_fp(&r, &st, frames, UNWINDER_MAX_FRAMES, &res);
                        }
                        unwind_maps_clear(&maps);
                }
        }
        free(blob);
        return 0;
}

#ifndef UNWIND_FUZZ_LIBFUZZER
/* Seed: a valid table (entry row, SP+16 row, FP row, terminator), regs at
 * the module's start, and a stack whose words point into the module and
 * into itself. Then deterministic mutations of it. */
static size_t make_seed(uint8_t *out, size_t cap, bool aarch64) {
        struct {
                UnwindTableHeader h;
                UnwindRow rows[4];
        } t = {
                .h = { .magic = UNWIND_TABLE_MAGIC, .version = UNWIND_TABLE_VERSION, .arch = UNWIND_ARCH_X86_64,
                       .row_size = sizeof(UnwindRow), .n_rows = 4 },
                .rows = {
                        { .start = 0x0, .cfa = UNWIND_RULE(UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP), .cfa_offset = 8,
                          .ra = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0), .ra_offset = -8, .fp = UNWIND_RULE(UNWIND_SAVED_SAME, 0) },
                        { .start = 0x100, .cfa = UNWIND_RULE(UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP), .cfa_offset = 16,
                          .ra = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0), .ra_offset = -8, .fp = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0), .fp_offset = -16 },
                        { .start = 0x200, .cfa = UNWIND_RULE(UNWIND_CFA_REG_OFFSET, UNWIND_REG_FP), .cfa_offset = 16,
                          .ra = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0), .ra_offset = -8, .fp = UNWIND_RULE(UNWIND_SAVED_AT_CFA, 0), .fp_offset = -16 },
                        { .start = 0x300, .cfa = UNWIND_CFA_NONE },
                },
        };
        if (aarch64) {
                /* a leaf at SP with its return address in LR, then the same frames */
                t.h.arch = UNWIND_ARCH_AARCH64;
                t.rows[0].cfa_offset = 0;
                t.rows[0].ra = UNWIND_RULE(UNWIND_SAVED_SAME, UNWIND_REG_LR);
                t.rows[0].ra_offset = 0;
        }
        uint16_t ts = sizeof(t);
        uint64_t regs[3] = { MODULE_BASE + 0x10, 0x7000000, 0x7000040 };
        size_t n = 0;
        memcpy(out + n, &ts, 2), n += 2;
        memcpy(out + n, &t, sizeof(t)), n += sizeof(t);
        memcpy(out + n, regs, sizeof(regs)), n += sizeof(regs);
        for (uint64_t i = 0; n + 8 <= cap && i < 64; i++) {
                uint64_t w = (i % 3 == 0) ? MODULE_BASE + 0x101 + i * 0x40 : (i % 3 == 1) ? 0x7000000 + i * 16 : JIT_BASE + 5;
                memcpy(out + n, &w, 8), n += 8;
        }
        return n;
}

int main(int argc, char **argv) {
        static uint8_t seed[4096], buf[4096];
        if (argc > 2 && strcmp(argv[1], "--dump-seed") == 0) {
                FILE *f = fopen(argv[2], "we");
                size_t len = make_seed(seed, sizeof(seed), false);
                if (!f || fwrite(seed, 1, len, f) != len || fclose(f) != 0)
                        return 1;
                return 0;
        }
        unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
        static uint8_t seed_a64[4096];
        uint64_t x = 0x9e3779b97f4a7c15ull;
        size_t n_x86 = make_seed(seed, sizeof(seed), false), n_a64 = make_seed(seed_a64, sizeof(seed_a64), true);

        for (unsigned long i = 0; i < rounds; i++) {
                /* every other input mutates the aarch64 seed */
                bool a64 = i % 2 == 1;
                size_t n = a64 ? n_a64 : n_x86, len = n;
                memcpy(buf, a64 ? seed_a64 : seed, n);
                int flips = 1 + (int) (i % 8);
                for (int k = 0; k < flips; k++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        buf[x % len] ^= (uint8_t) (x >> 32);
                }
                if (i % 17 == 0)
                        len = (size_t) (x % (n + 1));
                LLVMFuzzerTestOneInput(buf, len);
        }
        printf("fuzz driver: %lu mutated inputs without a crash\n", rounds);
        return 0;
}
#endif
