/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwind-table: the compiler on real binaries (this test, libc, a
 * program with .plt and a signal trampoline), and the validator against
 * garbage: every malformed field is rejected with a reason, random blobs and
 * tables compiled from ELF files with garbage call frame information never
 * get past validation into the unwinder in a broken state. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "basic.h"
#include "protocol.h"
#include "test-check.h"
#include "unwind-compile.h"

static uint32_t rng_state = 12345;
static uint32_t rng(void) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 17;
        rng_state ^= rng_state << 5;
        return rng_state;
}

static int compile_path(const char *path, void **blob, size_t *size, UnwindCompileStats *st) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return unwind_compile_fd(fd, blob, size, st);
}

/* Compiles path into *blob and validates the table into t (an empty one
 * when it does not validate); a failure names what. Returns what compiling
 * returned: t and st are there to check when it is 0. */
static int compile_validated(const char *path, const char *what, void **blob, UnwindTable *t, UnwindCompileStats *st) {
        const char *reason = NULL;
        size_t size;
        *t = (UnwindTable) {};
        int r = compile_path(path, blob, &size, st);
        CHECK_MSG(r == 0, "compiling %s: %s", what, strerror(-r));
        if (r < 0)
                return r;
        UnwindTable v;
        r = unwind_table_validate(*blob, size, &v, &reason);
        CHECK_MSG(r == 0, "the table of %s does not validate: %s", what, reason);
        if (r == 0)
                *t = v;
        return 0;
}

/* A function of this program, to look up in its own table. */
__attribute__((noinline)) static int probe_function(int x) {
        volatile int v = x;
        return v * 3 + 1;
}

/* File offset of a code address of this program (through /proc/self/maps). */
static bool self_offset(uint64_t addr, uint64_t *off) {
        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        FILE *f = fopen("/proc/self/maps", "re");
        bool found = false;

        while (f && getline(&line, &n, f) > 0) {
                unsigned long s, e, pg;
                char perms[8];
                if (sscanf(line, "%lx-%lx %7s %lx", &s, &e, perms, &pg) == 4 && addr >= s && addr < e) {
                        *off = addr - s + pg;
                        found = true;
                }
        }
        if (f)
                fclose(f);
        return found;
}

/* This test's own binary: its .eh_frame and PLT, and the row at a known
 * function's entry. */
TEST(own_binary) {
        _cleanup_free_ void *blob = NULL;
        UnwindCompileStats st;
        UnwindTable t;
        uint64_t off = 0;
        const UnwindRow *row;

        if (compile_validated("/proc/self/exe", "this test", &blob, &t, &st) < 0)
                return;
        CHECK_MSG(st.fdes_eh_frame > 10, "only %u FDEs in this test's .eh_frame", st.fdes_eh_frame);
        CHECK_MSG(st.rows_plt >= 1, "no PLT row in this test's table");
        CHECK_MSG(self_offset((uint64_t) (uintptr_t) probe_function, &off), "probe_function not in maps");
        row = unwind_table_lookup(&t, off);
        CHECK_MSG(row && unwind_rule_kind(row->cfa) == UNWIND_CFA_REG_OFFSET && unwind_rule_reg(row->cfa) == UNWIND_REG_SP &&
                          row->cfa_offset == 8 && unwind_rule_kind(row->ra) == UNWIND_SAVED_AT_CFA && row->ra_offset == -8,
                  "entry row of probe_function is not CFA=SP+8, RA at CFA-8");
        CHECK_MSG(probe_function(1) == 4, "probe");
}

/* libc: thousands of rows, few unsupported, __restore_rt as a signal frame. */
TEST(libc) {
        _cleanup_free_ void *libc_blob = NULL;
        UnwindCompileStats st;
        UnwindTable t;
        if (compile_validated("/lib/x86_64-linux-gnu/libc.so.6", "libc", &libc_blob, &t, &st) == 0) {
                CHECK_MSG(st.rows_signal >= 1, "libc's __restore_rt was not compiled as a signal frame");
                CHECK_MSG(st.rows > 1000, "libc table has only %u rows", st.rows);
                CHECK_MSG(st.rows_unsupported * 100 < st.rows, "too many unsupported rows in libc: %u of %u",
                          st.rows_unsupported, st.rows);
                /* The signal trampoline row: CFA = *(SP+160), RA at SP+168, FP at SP+120. */
                bool found = false;
                for (uint32_t i = 0; i < t.n_rows; i++)
                        if (t.rows[i].flags & UNWIND_ROW_SIGNAL_FRAME) {
                                const UnwindRow *s = &t.rows[i];
                                found = unwind_rule_kind(s->cfa) == UNWIND_CFA_DEREF && s->cfa_offset == 160 &&
                                        unwind_rule_kind(s->ra) == UNWIND_SAVED_AT_REG && s->ra_offset == 168 &&
                                        unwind_rule_kind(s->fp) == UNWIND_SAVED_AT_REG && s->fp_offset == 120;
                        }
                CHECK_MSG(found, "libc's signal frame row is not the sigcontext layout");
        }
}

/* The vdso, compiled from memory like the service does. */
TEST(vdso) {
        UnwindCompileStats st;
        UnwindTable t;
        const char *reason;
        int r;
        const void *vdso = (const void *) getauxval(AT_SYSINFO_EHDR);
        if (vdso) {
                _cleanup_free_ void *vblob = NULL;
                size_t vsize;
                r = unwind_compile_memory(vdso, 8192, &vblob, &vsize, &st);
                CHECK_MSG(r == 0, "compiling the vdso: %s", strerror(-r));
                if (r == 0)
                        CHECK_MSG(unwind_table_validate(vblob, vsize, &t, &reason) == 0, "vdso table: %s", reason);
        }
}

/* aarch64: the vector program (tests/service/unwind/aarch64/). */
TEST(aarch64_program) {
        UnwindCompileStats st;
        UnwindTable t;
        {
                _cleanup_free_ void *ablob = NULL;
                if (compile_validated(AARCH64_VECTORS "/chain-pac", "the aarch64 program", &ablob, &t, &st) == 0) {
                        CHECK(t.arch == UNWIND_ARCH_AARCH64);
                        CHECK_MSG(st.rows_unsupported == 0, "%u unsupported rows in the PAC build",
                                  st.rows_unsupported);
                        CHECK_MSG(st.rows_signal == 1, "no row for its __kernel_rt_sigreturn");
                        bool leaf = false, sig = false;
                        for (uint32_t i = 0; i < t.n_rows; i++) {
                                const UnwindRow *a = &t.rows[i];
                                leaf = leaf ||
                                       (a->cfa == UNWIND_RULE(UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP) &&
                                        a->cfa_offset == 0 && a->ra == UNWIND_RULE(UNWIND_SAVED_SAME, UNWIND_REG_LR));
                                if (a->flags & UNWIND_ROW_SIGNAL_FRAME)
                                        sig = a->cfa == UNWIND_RULE(UNWIND_CFA_DEREF, UNWIND_REG_SP) &&
                                              a->cfa_offset == 560 &&
                                              a->ra == UNWIND_RULE(UNWIND_SAVED_AT_REG, UNWIND_REG_SP) &&
                                              a->ra_offset == 568 &&
                                              a->fp == UNWIND_RULE(UNWIND_SAVED_AT_REG, UNWIND_REG_SP) &&
                                              a->fp_offset == 544;
                        }
                        CHECK_MSG(leaf, "no aarch64 leaf row (CFA = SP, return address in LR)");
                        CHECK_MSG(sig, "the aarch64 signal row is not the rt_sigframe's sigcontext");
                }
        }
}

/* Debian's arm64 libc (libc6-arm64-cross). */
TEST(aarch64_libc) {
        UnwindCompileStats st;
        UnwindTable t;
        {
                _cleanup_free_ void *ablob = NULL;
                if (compile_validated("/usr/aarch64-linux-gnu/lib/libc.so.6", "arm64 libc (libc6-arm64-cross)", &ablob,
                                      &t, &st) == 0) {
                        CHECK_MSG(st.rows > 1000, "arm64 libc table has only %u rows", st.rows);
                        CHECK_MSG(st.rows_unsupported * 100 < st.rows,
                                  "too many unsupported rows in arm64 libc: %u of %u", st.rows_unsupported, st.rows);
                        printf("arm64 libc: %u rows, %u unsupported\n", st.rows, st.rows_unsupported);
                }
        }
}

/* Not ELF, or no CFI at all. */
TEST(not_elf) {
        {
                _cleanup_free_ void *b = NULL;
                size_t s;
                static const char junk[] = "this is not an ELF file, not at all";
                CHECK_MSG(unwind_compile_memory(junk, sizeof(junk), &b, &s, NULL) == -ENOEXEC, "junk compiled");
        }
}

/* A small valid table to mutate. */
typedef struct TestTable {
        UnwindTableHeader h;
        UnwindRow rows[4];
} TestTable;

static TestTable good_table(void) {
        TestTable t = {
                .h = { .magic = UNWIND_TABLE_MAGIC, .version = UNWIND_TABLE_VERSION, .arch = UNWIND_ARCH_X86_64,
                       .row_size = sizeof(UnwindRow), .n_rows = 4 },
                .rows = {
                        { .start = 0x1000, .cfa = unwind_rule_pack(UNWIND_CFA_REG_OFFSET, UNWIND_REG_SP), .cfa_offset = 8,
                          .ra = unwind_rule_pack(UNWIND_SAVED_AT_CFA, 0), .ra_offset = -8,
                          .fp = unwind_rule_pack(UNWIND_SAVED_SAME, 0) },
                        { .start = 0x1004, .cfa = unwind_rule_pack(UNWIND_CFA_REG_OFFSET, UNWIND_REG_FP), .cfa_offset = 16,
                          .ra = unwind_rule_pack(UNWIND_SAVED_AT_CFA, 0), .ra_offset = -8,
                          .fp = unwind_rule_pack(UNWIND_SAVED_AT_CFA, 0), .fp_offset = -16 },
                        { .start = 0x1040, .cfa = unwind_rule_pack(UNWIND_CFA_PLT, UNWIND_REG_SP), .cfa_offset = 8,
                          .ra = unwind_rule_pack(UNWIND_SAVED_AT_CFA, 0), .ra_offset = -8,
                          .fp = unwind_rule_pack(UNWIND_SAVED_SAME, 0), .flags = 11 << 4 },
                        { .start = 0x1080, .cfa = UNWIND_CFA_NONE },
                },
        };
        return t;
}

static void expect_rejected(const TestTable *t, size_t size, const char *what) {
        const char *reason = NULL;
        UnwindTable out;
        int r = unwind_table_validate(t, size, &out, &reason);
        CHECK_MSG(r < 0 && reason, "garbage accepted: %s", what);
}

TEST(validator_lookups) {
        TestTable t = good_table();
        const char *reason;
        UnwindTable out;

        CHECK_MSG(unwind_table_validate(&t, sizeof(t), &out, &reason) == 0, "good table rejected: %s", reason);
        CHECK_MSG(unwind_table_lookup(&out, 0xfff) == NULL, "lookup before first row");
        CHECK_MSG(unwind_table_lookup(&out, 0x1000) == &out.rows[0], "lookup at start");
        CHECK_MSG(unwind_table_lookup(&out, 0x1003) == &out.rows[0], "lookup inside");
        CHECK_MSG(unwind_table_lookup(&out, 0x1004) == &out.rows[1], "lookup next");
        CHECK_MSG(unwind_table_lookup(&out, 0xffffffffffull) == &out.rows[3], "lookup far beyond");
}

TEST(validator_rejects) {
        const char *reason;
#define MUTATE(what, stmt)                              \
        do {                                            \
                TestTable m = good_table();             \
                stmt;                                   \
                expect_rejected(&m, sizeof(m), what);   \
        } while (0)

        MUTATE("bad magic", m.h.magic ^= 1);
        MUTATE("future version", m.h.version = 2);
        MUTATE("unknown arch", m.h.arch = 9);
        MUTATE("row size", m.h.row_size = 12);
        MUTATE("reserved flags", m.h.flags = 1);
        MUTATE("reserved field", m.h.reserved = 1);
        MUTATE("more rows than bytes", m.h.n_rows = 5);
        MUTATE("fewer rows than bytes", m.h.n_rows = 3);
        MUTATE("zero rows", m.h.n_rows = 0);
        MUTATE("huge row count", m.h.n_rows = 0xffffffffu);
        MUTATE("unsorted", m.rows[1].start = 0x0fff);
        MUTATE("duplicate start", m.rows[1].start = 0x1000);
        MUTATE("unknown CFA rule", m.rows[0].cfa = unwind_rule_pack(7, UNWIND_REG_SP));
        MUTATE("CFA register out of range", m.rows[0].cfa = unwind_rule_pack(UNWIND_CFA_REG_OFFSET, 9));
        MUTATE("CFA register LR", m.rows[0].cfa = unwind_rule_pack(UNWIND_CFA_REG_OFFSET, UNWIND_REG_LR));
        MUTATE("CFA below SP", m.rows[0].cfa_offset = -8);
        MUTATE("CFA at SP on x86-64", m.rows[0].cfa_offset = 0);
        MUTATE("CFA offset huge", m.rows[1].cfa_offset = 1 << 30);
        MUTATE("RA rule same on x86-64", m.rows[0].ra = unwind_rule_pack(UNWIND_SAVED_SAME, 0));
        MUTATE("RA rule unknown", m.rows[0].ra = unwind_rule_pack(9, 0));
        MUTATE("RA offset misaligned", m.rows[0].ra_offset = -7);
        MUTATE("FP rule bad register", m.rows[1].fp = unwind_rule_pack(UNWIND_SAVED_AT_REG, 7));
        MUTATE("FP same with offset", m.rows[0].fp_offset = 8);
        MUTATE("CFA-relative rule with register", m.rows[1].fp = unwind_rule_pack(UNWIND_SAVED_AT_CFA, UNWIND_REG_SP));
        MUTATE("PLT without threshold", m.rows[2].flags = 0);
        MUTATE("PLT on FP", m.rows[2].cfa = unwind_rule_pack(UNWIND_CFA_PLT, UNWIND_REG_FP));
        MUTATE("parameter on non-PLT row", m.rows[0].flags = 3 << 4);
        MUTATE("unknown row flag", m.rows[0].flags = 0x4);
        MUTATE("PLT on aarch64", m.h.arch = UNWIND_ARCH_AARCH64);
        MUTATE("last row not terminating", m.rows[3] = m.rows[0]; m.rows[3].start = 0x2000);
        MUTATE("terminating row with junk", m.rows[3].cfa_offset = 8);

        {
                TestTable m = good_table();
                expect_rejected(&m, sizeof(m) - 1, "size not a whole number of rows");
                expect_rejected(&m, sizeof(UnwindTableHeader) - 1, "truncated header");
                expect_rejected(NULL, 0, "NULL blob");
                CHECK_MSG(unwind_table_validate((const uint8_t *) &m + 1, sizeof(m) - 1, NULL, &reason) < 0,
                          "misaligned blob accepted");
        }
}

/* aarch64: a frameless leaf keeps its return address in LR. */
TEST(validator_aarch64_leaf) {
        const char *reason;
        UnwindTable out;
        {
                TestTable m = good_table();
                m.h.arch = UNWIND_ARCH_AARCH64;
                m.rows[2] = m.rows[0];
                m.rows[2].start = 0x1040;
                m.rows[0].ra = unwind_rule_pack(UNWIND_SAVED_SAME, UNWIND_REG_LR);
                m.rows[0].ra_offset = 0;
                CHECK_MSG(unwind_table_validate(&m, sizeof(m), &out, &reason) == 0, "aarch64 leaf row rejected: %s", reason);
                /* a leaf allocates nothing: its CFA is its SP */
                m.rows[0].cfa_offset = 0;
                CHECK_MSG(unwind_table_validate(&m, sizeof(m), &out, &reason) == 0, "aarch64 leaf at SP rejected: %s",
                          reason);
                /* ... and so is _start's, the outermost frame */
                m.rows[0].ra = unwind_rule_pack(UNWIND_SAVED_UNDEFINED, 0);
                CHECK_MSG(unwind_table_validate(&m, sizeof(m), &out, &reason) == 0, "aarch64 _start at SP rejected: %s",
                          reason);
                /* a frame whose return address is on the stack has its CFA above SP */
                m.rows[0].ra = unwind_rule_pack(UNWIND_SAVED_AT_CFA, 0);
                m.rows[0].ra_offset = -8;
                expect_rejected(&m, sizeof(m), "aarch64 CFA at SP with the return address saved");
                m.rows[0].ra = unwind_rule_pack(UNWIND_SAVED_SAME, UNWIND_REG_FP);
                m.rows[0].ra_offset = 0;
                expect_rejected(&m, sizeof(m), "aarch64 return address 'same' in FP");
        }
}

/* Random mutations of a valid table: whatever validates must be internally
 * consistent (lookups stay in the table). */
TEST(validator_random_mutations) {
        UnwindTable out;
        rng_state = 12345; /* the same mutations, run alone or not */
        for (int i = 0; i < 200000; i++) {
                TestTable m = good_table();
                uint8_t *b = (uint8_t *) &m;
                int flips = 1 + (int) (rng() % 4);
                for (int k = 0; k < flips; k++)
                        b[rng() % sizeof(m)] ^= (uint8_t) (1u << (rng() % 8));
                if (unwind_table_validate(&m, sizeof(m), &out, NULL) == 0) {
                        const UnwindRow *row = unwind_table_lookup(&out, rng());
                        CHECK_MSG(!row || (row >= out.rows && row < out.rows + out.n_rows), "lookup out of table");
                        for (uint32_t k = 1; k < out.n_rows; k++)
                                CHECK_MSG(out.rows[k].start > out.rows[k - 1].start, "validated unsorted table");
                }
        }
}

/* Compiles copies of a real binary whose .eh_frame bytes are overwritten
 * with garbage: the compiler must not crash, and whatever it produces must
 * validate (what it cannot express is marked, never invented). */
static void hostile_elf(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ uint8_t *image = NULL;
        off_t size;
        uint64_t eh_off = 0, eh_size = 0, hdr_off = 0, hdr_size = 0;
        Elf *elf;
        Elf_Scn *scn = NULL;
        size_t shstrndx;

        CHECK_MSG(fd >= 0, "open self");
        if (fd < 0)
                return;
        size = lseek(fd, 0, SEEK_END);
        image = malloc((size_t) size);
        CHECK_MSG(image && pread(fd, image, (size_t) size, 0) == size, "read self");
        elf_version(EV_CURRENT);
        elf = elf_memory((char *) image, (size_t) size);
        CHECK_MSG(elf && elf_getshdrstrndx(elf, &shstrndx) == 0, "parse self");
        while (elf && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                const char *n;
                if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
                        continue;
                if (strcmp(n, ".eh_frame") == 0) {
                        eh_off = sh.sh_offset;
                        eh_size = sh.sh_size;
                } else if (strcmp(n, ".eh_frame_hdr") == 0) {
                        hdr_off = sh.sh_offset;
                        hdr_size = sh.sh_size;
                }
        }
        if (elf)
                elf_end(elf);
        CHECK_MSG(eh_size > 64, "no .eh_frame in self");
        if (eh_size <= 64)
                return;

        rng_state = 12345; /* the same garbage, run alone or not */
        for (int round = 0; round < 300; round++) {
                _cleanup_free_ uint8_t *copy = malloc((size_t) size);
                _cleanup_free_ void *blob = NULL;
                size_t blob_size;
                const char *reason;
                int r;

                memcpy(copy, image, (size_t) size);
                /* Flip bytes in .eh_frame (and sometimes its index). */
                for (int k = 0; k < 1 + round % 40; k++)
                        copy[eh_off + rng() % eh_size] = (uint8_t) rng();
                if (round % 3 == 0 && hdr_size)
                        copy[hdr_off + rng() % hdr_size] = (uint8_t) rng();
                if (round % 10 == 0) /* lengths: the first words of CIE/FDE records */
                        for (uint64_t p = 0; p + 4 <= eh_size && p < 512; p += 4 + rng() % 60)
                                copy[eh_off + p] = (uint8_t) rng();
                r = unwind_compile_memory(copy, (size_t) size, &blob, &blob_size, NULL);
                if (r == 0) {
                        r = unwind_table_validate(blob, blob_size, NULL, &reason);
                        CHECK_MSG(r == 0, "compiler produced an invalid table from garbage CFI (round %d): %s", round, reason);
                }
        }
}

TEST(hostile_cfi) {
        hostile_elf("/proc/self/exe");
}

/* an aarch64 program (tests/service/unwind/aarch64/) */
TEST(hostile_cfi_aarch64) {
        hostile_elf(AARCH64_VECTORS "/chain-pac");
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
