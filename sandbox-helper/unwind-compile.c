/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-compile.c: .eh_frame/.debug_frame → compact unwind table.
 *
 * FDEs are enumerated with dwarf_next_cfi (their initial_location decoded
 * here, with the CIE's pointer encoding); each FDE's rows are produced by
 * libdw (dwarf_cfi_addrframe + dwarf_frame_cfa/dwarf_frame_register), and
 * every row is translated into the table's fixed vocabulary or marked
 * UNSUPPORTED. Addresses become file offsets through the PT_LOAD headers, so
 * the service maps an IP with ip - mapping_start + mapping_file_offset. */
#include "unwind-compile.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "decompress-limits.h"
#include "protocol.h"

/* DWARF register numbers of the x86-64 psABI. */
#define X86_64_DWARF_RBP 6
#define X86_64_DWARF_RSP 7
#define X86_64_DWARF_RIP 16

/* DWARF register numbers of the aarch64 ABI: x29 (frame pointer), x30 (link
 * register, the return address column), sp. */
#define AARCH64_DWARF_X29 29
#define AARCH64_DWARF_X30 30
#define AARCH64_DWARF_SP 31

/* The arm64 signal frame at the SP __kernel_rt_sigreturn runs with:
 * struct rt_sigframe { siginfo (128 bytes); ucontext, whose uc_mcontext
 * (struct sigcontext) is at 176 }; sigcontext: fault_address, regs[31], sp,
 * pc. Linux's vdso carries no CFI for it (disabled since 5.8), so the
 * compiler writes its row from the symbol. */
#define AARCH64_SIGCONTEXT 304
#define AARCH64_SIGCONTEXT_X29 (AARCH64_SIGCONTEXT + 8 + 29 * 8)
#define AARCH64_SIGCONTEXT_SP (AARCH64_SIGCONTEXT + 8 + 31 * 8)
#define AARCH64_SIGCONTEXT_PC (AARCH64_SIGCONTEXT_SP + 8)

/* The registers of one architecture's ABI the table names. */
typedef struct ArchRegs {
        UnwindArch arch;
        int sp, fp, ra; /* DWARF numbers of SP, FP and the return address column */
} ArchRegs;

static const ArchRegs arch_x86_64 = { UNWIND_ARCH_X86_64, X86_64_DWARF_RSP, X86_64_DWARF_RBP, X86_64_DWARF_RIP };
static const ArchRegs arch_aarch64 = { UNWIND_ARCH_AARCH64, AARCH64_DWARF_SP, AARCH64_DWARF_X29, AARCH64_DWARF_X30 };

typedef struct Segment {
        uint64_t vaddr, filesz, offset;
} Segment;

typedef struct PendingRow {
        uint64_t start, end;          /* file offsets, [start, end) */
        UnwindRow row;                /* .start filled in at the end */
} PendingRow;

typedef struct Compiler {
        Elf *elf;
        const ArchRegs *regs;
        Segment *segments;
        size_t n_segments;
        PendingRow *rows;
        size_t n_rows, allocated;
        /* Address ranges (vaddr) that .eh_frame covers; .debug_frame fills the rest. */
        uint64_t (*eh_ranges)[2];
        size_t n_eh_ranges, allocated_eh;
        UnwindCompileStats stats;
} Compiler;

static void compiler_done(Compiler *c) {
        free(c->segments);
        free(c->rows);
        free(c->eh_ranges);
}

static int load_segments(Compiler *c) {
        size_t n;

        if (elf_getphdrnum(c->elf, &n) < 0)
                return -ENOEXEC;
        c->segments = calloc(n ? n : 1, sizeof(Segment));
        if (!c->segments)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr mem, *ph = gelf_getphdr(c->elf, (int) i, &mem);
                if (!ph || ph->p_type != PT_LOAD)
                        continue;
                c->segments[c->n_segments++] = (Segment) { ph->p_vaddr, ph->p_filesz, ph->p_offset };
        }
        return 0;
}

/* vaddr → file offset through the PT_LOAD that holds it; false when none does. */
static bool vaddr_to_offset(const Compiler *c, uint64_t vaddr, uint64_t *ret) {
        for (size_t i = 0; i < c->n_segments; i++) {
                const Segment *s = &c->segments[i];
                if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
                        *ret = vaddr - s->vaddr + s->offset;
                        return true;
                }
        }
        return false;
}

static int push_row(Compiler *c, uint64_t vstart, uint64_t vend, const UnwindRow *row) {
        uint64_t start, last;

        if (vend <= vstart)
                return 0;
        /* Both ends must lie in the same segment; rows outside any are dropped. */
        if (!vaddr_to_offset(c, vstart, &start) || !vaddr_to_offset(c, vend - 1, &last) ||
            last < start || last - start != vend - 1 - vstart)
                return 0;
        if (last >= UINT32_MAX)
                return 0; /* files beyond 4 GiB are not covered (documented) */
        if (GROW_ARRAY(c->rows, c->allocated, c->n_rows + 1, 1024) < 0)
                return -ENOMEM;
        c->rows[c->n_rows++] = (PendingRow) { start, last + 1, *row };
        return 0;
}

static int push_eh_range(Compiler *c, uint64_t lo, uint64_t hi) {
        if (GROW_ARRAY(c->eh_ranges, c->allocated_eh, c->n_eh_ranges + 1, 256) < 0)
                return -ENOMEM;
        c->eh_ranges[c->n_eh_ranges][0] = lo;
        c->eh_ranges[c->n_eh_ranges][1] = hi;
        c->n_eh_ranges++;
        return 0;
}

static bool covered_by_eh_frame(const Compiler *c, uint64_t lo, uint64_t hi) {
        for (size_t i = 0; i < c->n_eh_ranges; i++)
                if (lo < c->eh_ranges[i][1] && c->eh_ranges[i][0] < hi)
                        return true;
        return false;
}

/* ---- DWARF expression patterns ---- */

/* Matches DW_OP_bregN / DW_OP_bregx; returns the DWARF register and offset. */
static bool op_breg(const Dwarf_Op *op, int *reg, int64_t *off) {
        if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
                *reg = op->atom - DW_OP_breg0;
                *off = (int64_t) op->number;
                return true;
        }
        if (op->atom == DW_OP_bregx) {
                *reg = (int) op->number;
                *off = (int64_t) op->number2;
                return true;
        }
        return false;
}

static unsigned dwarf_reg_to_unwind(const ArchRegs *a, int dwarf_reg) {
        if (dwarf_reg == a->sp)
                return UNWIND_REG_SP;
        if (dwarf_reg == a->fp)
                return UNWIND_REG_FP;
        return UNWIND_REG_NONE;
}

static bool is_lit(const Dwarf_Op *op, unsigned *v) {
        if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
                *v = op->atom - DW_OP_lit0;
                return true;
        }
        return false;
}

/* The CFA rule of a row: plain reg+offset, deref, or the PLT expression
 * `rsp + off + ((rip & 15) >= K) << 3` that GCC/binutils emit for .plt. */
static bool translate_cfa(const ArchRegs *a, Dwarf_Frame *frame, UnwindRow *row, UnwindCompileStats *stats) {
        Dwarf_Op *ops;
        size_t nops;
        int reg, reg2;
        int64_t off, off2;
        unsigned u, k;

        if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0)
                return false;
        if (!op_breg(&ops[0], &reg, &off) || !dwarf_reg_to_unwind(a, reg) || off <= -UNWIND_OFFSET_MAX ||
            off >= UNWIND_OFFSET_MAX)
                return false;
        row->cfa_offset = (int32_t) off;
        if (nops == 1) {
                row->cfa = unwind_rule_pack(UNWIND_CFA_REG_OFFSET, dwarf_reg_to_unwind(a, reg));
                /* aarch64 leaves: CFA = sp + 0 (checked with the RA rule) */
                return !(reg == a->sp && (off < 0 || (off == 0 && a->arch != UNWIND_ARCH_AARCH64)));
        }
        if (nops == 2 && ops[1].atom == DW_OP_deref) {
                row->cfa = unwind_rule_pack(UNWIND_CFA_DEREF, dwarf_reg_to_unwind(a, reg));
                return true;
        }
        if (a->arch == UNWIND_ARCH_X86_64 && nops == 9 && reg == X86_64_DWARF_RSP && op_breg(&ops[1], &reg2, &off2) &&
            reg2 == X86_64_DWARF_RIP && off2 == 0 && is_lit(&ops[2], &u) && u == 15 && ops[3].atom == DW_OP_and &&
            is_lit(&ops[4], &k) && k >= 1 && k <= 15 && ops[5].atom == DW_OP_ge && is_lit(&ops[6], &u) && u == 3 &&
            ops[7].atom == DW_OP_shl && ops[8].atom == DW_OP_plus && off > 0) {
                row->cfa = unwind_rule_pack(UNWIND_CFA_PLT, UNWIND_REG_SP);
                row->flags |= (uint8_t) (k << 4);
                stats->rows_plt++;
                return true;
        }
        return false;
}

/* Where the caller's value of DWARF register regno is; false when the rule
 * cannot be expressed. */
static bool translate_saved(const ArchRegs *a, Dwarf_Frame *frame, int regno, uint8_t *rule, int16_t *offset) {
        Dwarf_Op mem[3], *ops;
        size_t nops;
        int reg;
        int64_t off;

        *offset = 0;
        if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
                return false;
        if (nops == 0) {
                *rule = unwind_rule_pack(ops ? UNWIND_SAVED_UNDEFINED : UNWIND_SAVED_SAME, UNWIND_REG_NONE);
                return true;
        }
        if (ops[nops - 1].atom == DW_OP_stack_value)
                return false; /* a computed value, not a saved slot */
        /* DW_CFA_expression: libdw pushes the CFA first, as DWARF says. */
        if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && op_breg(&ops[1], &reg, &off)) {
                ops++;
                nops--;
        }
        if (ops[0].atom == DW_OP_call_frame_cfa) {
                if (nops == 1)
                        off = 0;
                else if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
                        off = (int64_t) ops[1].number;
                else
                        return false;
                if (off % 8 != 0 || off < INT16_MIN || off > INT16_MAX)
                        return false;
                *rule = unwind_rule_pack(UNWIND_SAVED_AT_CFA, UNWIND_REG_NONE);
                *offset = (int16_t) off;
                return true;
        }
        /* DW_CFA_expression "bregN off": saved at register N + off. */
        if (nops == 1 && op_breg(&ops[0], &reg, &off) && dwarf_reg_to_unwind(a, reg) && off % 8 == 0 &&
            off >= INT16_MIN && off <= INT16_MAX) {
                *rule = unwind_rule_pack(UNWIND_SAVED_AT_REG, dwarf_reg_to_unwind(a, reg));
                *offset = (int16_t) off;
                return true;
        }
        return false;
}

static const UnwindRow unsupported_row = { .cfa = UNWIND_CFA_UNSUPPORTED };

/* One row of libdw's CFA table → one table row (UNSUPPORTED when not expressible). */
static UnwindRow translate_frame(Compiler *c, Dwarf_Frame *frame, bool signal_frame) {
        const ArchRegs *a = c->regs;
        UnwindRow row = {};
        bool ok = translate_cfa(a, frame, &row, &c->stats) && translate_saved(a, frame, a->ra, &row.ra, &row.ra_offset);

        /* aarch64: the return address still in x30 (a leaf, a prologue
         * before its store) is "same value" of the LR; x86-64 always
         * pushes it, so "same" there cannot be expressed. */
        if (ok && unwind_rule_kind(row.ra) == UNWIND_SAVED_SAME) {
                if (a->arch == UNWIND_ARCH_AARCH64)
                        row.ra = unwind_rule_pack(UNWIND_SAVED_SAME, UNWIND_REG_LR);
                else
                        ok = false;
        }
        /* a CFA at SP itself is a leaf's (or aarch64 _start's), which only aarch64 has */
        if (ok && unwind_rule_kind(row.cfa) == UNWIND_CFA_REG_OFFSET && unwind_rule_reg(row.cfa) == UNWIND_REG_SP &&
            row.cfa_offset == 0 && unwind_rule_kind(row.ra) != UNWIND_SAVED_SAME &&
            unwind_rule_kind(row.ra) != UNWIND_SAVED_UNDEFINED)
                ok = false;
        if (!ok) {
                c->stats.rows_unsupported++;
                return unsupported_row;
        }
        if (!translate_saved(a, frame, a->fp, &row.fp, &row.fp_offset)) {
                /* The caller's frame pointer is lost, the rest still works. */
                row.fp = unwind_rule_pack(UNWIND_SAVED_UNDEFINED, UNWIND_REG_NONE);
                row.fp_offset = 0;
        }
        if (signal_frame) {
                row.flags |= UNWIND_ROW_SIGNAL_FRAME;
                c->stats.rows_signal++;
        }
        return row;
}

/* Emits the rows for one FDE covering [lo, hi) (vaddrs). */
static int compile_fde(Compiler *c, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi) {
        uint64_t addr = lo;

        while (addr < hi) {
                Dwarf_Frame *frame = NULL;
                Dwarf_Addr start, end;
                bool signalp = false;
                UnwindRow row;
                int r;

                if (dwarf_cfi_addrframe(cfi, addr, &frame) != 0 || !frame)
                        return push_row(c, addr, hi, &unsupported_row);
                if (dwarf_frame_info(frame, &start, &end, &signalp) < 0 || end <= addr) {
                        free(frame);
                        return push_row(c, addr, hi, &unsupported_row);
                }
                row = translate_frame(c, frame, signalp);
                free(frame);
                if (end > hi)
                        end = hi;
                r = push_row(c, addr, end, &row);
                if (r < 0)
                        return r;
                addr = end;
        }
        return 0;
}

/* ---- FDE enumeration ---- */

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v) {
        uint64_t r = 0;
        for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
                uint8_t b = *(*p)++;
                r |= (uint64_t) (b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *v = r;
                        return true;
                }
        }
        return false;
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v) {
        uint64_t r = 0;
        unsigned shift = 0;
        while (*p < end && shift < 64) {
                uint8_t b = *(*p)++;
                r |= (uint64_t) (b & 0x7f) << shift;
                shift += 7;
                if (!(b & 0x80)) {
                        if (shift < 64 && (b & 0x40))
                                r |= ~(uint64_t) 0 << shift;
                        *v = (int64_t) r;
                        return true;
                }
        }
        return false;
}

/* Decodes a DW_EH_PE_* encoded value at *p (the value format only; the
 * caller applies pcrel). */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v) {
        size_t n;
        int64_t s;

        switch (enc & 0x0f) {
        case DW_EH_PE_absptr:
        case DW_EH_PE_udata8:
        case DW_EH_PE_sdata8:
                n = 8;
                break;
        case DW_EH_PE_udata4:
        case DW_EH_PE_sdata4:
                n = 4;
                break;
        case DW_EH_PE_udata2:
        case DW_EH_PE_sdata2:
                n = 2;
                break;
        case DW_EH_PE_uleb128:
                return read_uleb(p, end, v);
        case DW_EH_PE_sleb128:
                if (!read_sleb(p, end, &s))
                        return false;
                *v = (uint64_t) s;
                return true;
        default:
                return false;
        }
        if ((size_t) (end - *p) < n)
                return false;
        uint64_t r = 0;
        for (size_t i = 0; i < n; i++)
                r |= (uint64_t) (*p)[i] << (8 * i);
        if ((enc & 0x0f) == DW_EH_PE_sdata4)
                r = (uint64_t) (int64_t) (int32_t) r;
        else if ((enc & 0x0f) == DW_EH_PE_sdata2)
                r = (uint64_t) (int64_t) (int16_t) r;
        *p += n;
        *v = r;
        return true;
}

/* The FDE pointer encoding announced by a CIE's 'R' augmentation. */
static bool cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc) {
        const char *a = cie->augmentation;
        const uint8_t *p = cie->augmentation_data, *end;

        *enc = DW_EH_PE_absptr;
        if (!a || a[0] != 'z')
                return a && a[0] == '\0'; /* no augmentation: absolute pointers */
        if (!p)
                return false;
        end = p + cie->augmentation_data_size;
        for (a++; *a; a++) {
                uint8_t e;
                uint64_t skip;
                switch (*a) {
                case 'R':
                        if (p >= end)
                                return false;
                        *enc = *p;
                        return true;
                case 'L':
                        if (p >= end)
                                return false;
                        p++;
                        break;
                case 'P':
                        if (p >= end)
                                return false;
                        e = *p++;
                        if (!read_encoded(&p, end, e, &skip))
                                return false;
                        break;
                case 'S':
                case 'B':
                case 'G':
                        break;
                default:
                        return false;
                }
        }
        return true;
}

typedef struct CieEncoding {
        Dwarf_Off offset;
        uint8_t enc;
        bool ok;
} CieEncoding;

static int compile_section(Compiler *c, Elf_Scn *scn, Dwarf_CFI *cfi, bool eh_frame) {
        GElf_Shdr shdr_mem, *shdr = gelf_getshdr(scn, &shdr_mem);
        Elf_Data *data = elf_getdata(scn, NULL);
        const unsigned char *ident = (const unsigned char *) elf_getident(c->elf, NULL);
        _cleanup_free_ CieEncoding *cies = NULL;
        size_t n_cies = 0, allocated = 0;
        Dwarf_Off off, next;
        int r;

        if (!shdr || !data || !data->d_buf || !ident || shdr->sh_type == SHT_NOBITS)
                return 0;

        /* First pass: CIEs and their FDE pointer encodings. */
        for (off = 0; off < data->d_size; off = next) {
                Dwarf_CFI_Entry entry;
                r = dwarf_next_cfi(ident, data, eh_frame, off, &next, &entry);
                if (r != 0)
                        break;
                if (entry.CIE_id != LIBDW_CIE_ID)
                        continue;
                if (n_cies == allocated) {
                        size_t n = allocated ? allocated * 2 : 16;
                        CieEncoding *p = reallocarray(cies, n, sizeof(CieEncoding));
                        if (!p)
                                return -ENOMEM;
                        cies = p;
                        allocated = n;
                }
                cies[n_cies].offset = off;
                cies[n_cies].ok = cie_fde_encoding(&entry.cie, &cies[n_cies].enc);
                n_cies++;
        }

        /* Second pass: each FDE's address range, then its rows. */
        for (off = 0; off < data->d_size; off = next) {
                Dwarf_CFI_Entry entry;
                const uint8_t *p, *end;
                uint64_t lo, len;
                uint8_t enc = DW_EH_PE_absptr;
                bool found = false;

                r = dwarf_next_cfi(ident, data, eh_frame, off, &next, &entry);
                if (r != 0)
                        break;
                if (entry.CIE_id == LIBDW_CIE_ID)
                        continue;
                for (size_t i = 0; i < n_cies; i++)
                        if (cies[i].offset == entry.fde.CIE_pointer) {
                                found = cies[i].ok;
                                enc = cies[i].enc;
                                break;
                        }
                if (!found || (enc & 0x80) /* indirect */ || (enc & 0x70) > DW_EH_PE_pcrel)
                        continue;
                if (!eh_frame && enc == DW_EH_PE_absptr && ident[EI_CLASS] != ELFCLASS64)
                        continue;
                p = entry.fde.start;
                end = entry.fde.end;
                if (!read_encoded(&p, end, enc, &lo) || !read_encoded(&p, end, enc & 0x0f, &len))
                        continue;
                if ((enc & 0x70) == DW_EH_PE_pcrel)
                        lo += shdr->sh_addr + (uint64_t) (entry.fde.start - (const uint8_t *) data->d_buf);
                if (len == 0 || lo + len < lo)
                        continue;
                if (eh_frame) {
                        c->stats.fdes_eh_frame++;
                        r = push_eh_range(c, lo, lo + len);
                        if (r < 0)
                                return r;
                } else {
                        if (covered_by_eh_frame(c, lo, lo + len))
                                continue;
                        c->stats.fdes_debug_frame++;
                }
                r = compile_fde(c, cfi, lo, lo + len);
                if (r < 0)
                        return r;
        }
        return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name) {
        size_t shstrndx;
        Elf_Scn *scn = NULL;

        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
                const char *n = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
                if (n && strcmp(n, name) == 0)
                        return scn;
        }
        return NULL;
}

/* The address of symbol `name` (a function) in .symtab or .dynsym, 0 when none. */
static uint64_t find_function(Elf *elf, const char *name) {
        Elf_Scn *scn = NULL;

        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
                Elf_Data *data;
                size_t n;

                if (!sh || (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM) || sh->sh_entsize == 0)
                        continue;
                data = elf_getdata(scn, NULL);
                if (!data)
                        continue;
                n = sh->sh_size / sh->sh_entsize;
                for (size_t i = 0; i < n; i++) {
                        GElf_Sym sym_mem, *sym = gelf_getsym(data, (int) i, &sym_mem);
                        const char *s;

                        if (!sym || sym->st_value == 0 || sym->st_shndx == SHN_UNDEF ||
                            (GELF_ST_TYPE(sym->st_info) != STT_FUNC && GELF_ST_TYPE(sym->st_info) != STT_NOTYPE))
                                continue;
                        s = elf_strptr(elf, sh->sh_link, sym->st_name);
                        if (s && strcmp(s, name) == 0)
                                return sym->st_value;
                }
        }
        return 0;
}

/* aarch64: the signal return trampoline (the vdso's __kernel_rt_sigreturn,
 * `mov x8, #139; svc #0`, and the nop before it that a handler's return
 * address minus one falls in) gets a signal-frame row that restores the
 * interrupted context from the sigcontext at SP, when no CFI covers it. */
static int push_aarch64_sigreturn(Compiler *c) {
        uint64_t addr = find_function(c->elf, "__kernel_rt_sigreturn");
        UnwindRow row = {
                .cfa = UNWIND_RULE(UNWIND_CFA_DEREF, UNWIND_REG_SP),
                .ra = UNWIND_RULE(UNWIND_SAVED_AT_REG, UNWIND_REG_SP),
                .fp = UNWIND_RULE(UNWIND_SAVED_AT_REG, UNWIND_REG_SP),
                .flags = UNWIND_ROW_SIGNAL_FRAME,
                .cfa_offset = AARCH64_SIGCONTEXT_SP,
                .ra_offset = AARCH64_SIGCONTEXT_PC,
                .fp_offset = AARCH64_SIGCONTEXT_X29,
        };

        if (addr < 4 || covered_by_eh_frame(c, addr - 4, addr + 8))
                return 0;
        c->stats.rows_signal++;
        return push_row(c, addr - 4, addr + 8, &row);
}

static int cmp_pending(const void *a, const void *b) {
        const PendingRow *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->end < y->end ? -1 : x->end > y->end;
}

static bool same_rules(const UnwindRow *a, const UnwindRow *b) {
        return a->cfa == b->cfa && a->ra == b->ra && a->fp == b->fp && a->flags == b->flags &&
               a->cfa_offset == b->cfa_offset && a->ra_offset == b->ra_offset && a->fp_offset == b->fp_offset;
}

/* Sorts the pending rows, cuts overlaps, fills gaps with NONE rows, merges
 * neighbours with equal rules, and writes the blob. */
static int emit_table(Compiler *c, void **ret_blob, size_t *ret_size) {
        _cleanup_free_ uint8_t *blob = NULL;
        UnwindRow *out;
        size_t n = 0, cap;
        uint64_t covered_end = 0;

        if (c->n_rows == 0)
                return -ENODATA;
        qsort(c->rows, c->n_rows, sizeof(PendingRow), cmp_pending);
        cap = 2 * c->n_rows + 1;
        blob = malloc(sizeof(UnwindTableHeader) + cap * sizeof(UnwindRow));
        if (!blob)
                return -ENOMEM;
        out = (UnwindRow *) (blob + sizeof(UnwindTableHeader));

        for (size_t i = 0; i < c->n_rows; i++) {
                PendingRow *p = &c->rows[i];
                uint64_t start = p->start;

                if (n > 0 && start < covered_end) {
                        if (p->end <= covered_end)
                                continue; /* fully inside what an earlier FDE described */
                        start = covered_end;
                }
                if (n > 0 && start > covered_end) {
                        /* Gap between FDEs: no information there. */
                        if (unwind_rule_kind(out[n - 1].cfa) != UNWIND_CFA_NONE)
                                out[n++] = (UnwindRow) { .start = (uint32_t) covered_end, .cfa = UNWIND_CFA_NONE };
                }
                if (n > 0 && same_rules(&out[n - 1], &p->row) && out[n - 1].start < start &&
                    covered_end == start) {
                        covered_end = p->end;
                        continue;
                }
                if (n > 0 && out[n - 1].start == start)
                        n--; /* an empty NONE row would not be strictly sorted */
                out[n] = p->row;
                out[n].start = (uint32_t) start;
                n++;
                covered_end = p->end;
        }
        if (n == 0)
                return -ENODATA;
        out[n++] = (UnwindRow) { .start = (uint32_t) covered_end, .cfa = UNWIND_CFA_NONE };

        memcpy(blob,
               &(UnwindTableHeader){
                       .magic = UNWIND_TABLE_MAGIC,
                       .version = UNWIND_TABLE_VERSION,
                       .arch = c->regs->arch,
                       .row_size = sizeof(UnwindRow),
                       .n_rows = (uint32_t) n,
               },
               sizeof(UnwindTableHeader));
        c->stats.rows = (uint32_t) n;
        *ret_size = sizeof(UnwindTableHeader) + n * sizeof(UnwindRow);
        *ret_blob = TAKE_PTR(blob);
        return 0;
}

static int compile_elf(Elf *elf, void **ret_blob, size_t *ret_size, UnwindCompileStats *stats) {
        _cleanup_(compiler_done) Compiler c = { .elf = elf };
        GElf_Ehdr ehdr_mem, *ehdr;
        Elf_Scn *eh, *dbg;
        Dwarf *dw = NULL;
        int r;

        if (elf_kind(elf) != ELF_K_ELF || !(ehdr = gelf_getehdr(elf, &ehdr_mem)))
                return -ENOEXEC;
        if (ehdr->e_ident[EI_CLASS] != ELFCLASS64 || ehdr->e_ident[EI_DATA] != ELFDATA2LSB)
                return -EPROTONOSUPPORT;
        if (ehdr->e_machine == EM_X86_64)
                c.regs = &arch_x86_64;
        else if (ehdr->e_machine == EM_AARCH64)
                c.regs = &arch_aarch64;
        else
                return -EPROTONOSUPPORT;
        r = load_segments(&c);
        if (r < 0)
                return r;

        eh = find_section(elf, ".eh_frame");
        if (eh) {
                Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
                if (cfi) {
                        r = compile_section(&c, eh, cfi, true);
                        dwarf_cfi_end(cfi);
                        if (r < 0)
                                return r;
                }
        }
        /* libdw decompresses every debug section when it opens a file: not
         * past the helper's limit (decompress-limits.h); .eh_frame alone then */
        const char *too_large;
        dbg = find_section(elf, ".debug_frame");
        if (dbg && decompress_limits_check(elf, &too_large) == 0) {
                dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
                Dwarf_CFI *cfi = dw ? dwarf_getcfi(dw) : NULL;
                if (cfi)
                        r = compile_section(&c, dbg, cfi, false);
                if (dw)
                        dwarf_end(dw);
                if (r < 0)
                        return r;
        }

        if (c.regs->arch == UNWIND_ARCH_AARCH64) {
                r = push_aarch64_sigreturn(&c);
                if (r < 0)
                        return r;
        }

        r = emit_table(&c, ret_blob, ret_size);
        if (r < 0)
                return r;
        if (stats)
                *stats = c.stats;
        return 0;
}

int unwind_compile_fd(int fd, void **ret_blob, size_t *ret_size, UnwindCompileStats *stats) {
        Elf *elf;
        int r;

        elf_version(EV_CURRENT);
        elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                return -ENOEXEC;
        r = compile_elf(elf, ret_blob, ret_size, stats);
        elf_end(elf);
        return r;
}

int unwind_compile_memory(const void *image, size_t size, void **ret_blob, size_t *ret_size, UnwindCompileStats *stats) {
        _cleanup_free_ char *copy = NULL;
        Elf *elf;
        int r;

        /* elf_memory wants a writable buffer: hand it a private copy. */
        copy = malloc(size ? size : 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, image, size);
        elf_version(EV_CURRENT);
        elf = elf_memory(copy, size);
        if (!elf)
                return -ENOEXEC;
        r = compile_elf(elf, ret_blob, ret_size, stats);
        elf_end(elf);
        return r;
}
