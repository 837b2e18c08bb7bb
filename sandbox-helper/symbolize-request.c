/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-request.c: SYMBOLIZE with libdwfl/libdw: for every file offset the chain
 * of functions innermost first (DWARF inlined subroutines included), their
 * source positions, demangled names; symbol tables and MiniDebugInfo when the
 * file has no DWARF. Everything here runs inside the sandbox only. */
#include "symbolize-request.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "demangle.h"
#include "symbolize-module.h"

typedef struct Frame {
        char *name;
        const char *file; /* owned by libdw */
        uint32_t line, column;
        uint64_t offset;
        uint8_t flags;
        uint8_t source;
} Frame;

/* File offset to ELF virtual address through the PT_LOAD headers. */
static int offset_to_vaddr(Elf *elf, uint64_t offset, uint64_t *ret) {
        size_t phnum;
        if (elf_getphdrnum(elf, &phnum) < 0)
                return -ENOEXEC;
        for (size_t i = 0; i < phnum && i < 65536; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                if (offset >= ph.p_offset && offset - ph.p_offset < ph.p_filesz) {
                        *ret = ph.p_vaddr + (offset - ph.p_offset);
                        return 0;
                }
        }
        return -ERANGE;
}

/* Offset from the 4 KiB-aligned start of the only executable PT_LOAD to ELF
 * virtual address: what a debug file alone allows (objcopy --only-keep-debug
 * keeps p_vaddr and p_memsz, not p_offset and p_filesz). */
static int segment_offset_to_vaddr(Elf *elf, uint64_t offset, uint64_t *ret) {
        size_t phnum;
        GElf_Phdr text = {};
        unsigned n_text = 0;
        if (elf_getphdrnum(elf, &phnum) < 0)
                return -ENOEXEC;
        for (size_t i = 0; i < phnum && i < 65536; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, (int) i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
                        text = ph;
                        n_text++;
                }
        }
        if (n_text != 1)
                return -ERANGE;
        uint64_t start = text.p_vaddr & ~(uint64_t) 4095;
        if (offset > UINT64_MAX - start || start + offset < text.p_vaddr || start + offset - text.p_vaddr >= text.p_memsz)
                return -ERANGE;
        *ret = start + offset;
        return 0;
}

/* Best name of a function DIE: demangled linkage name, else DW_AT_name. */
static char *die_function_name(Dwarf_Die *die) {
        Dwarf_Attribute attr;
        const char *name = NULL;
        if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
            dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
                name = dwarf_formstring(&attr);
        if (!name)
                name = dwarf_diename(die);
        if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
                name = dwarf_formstring(&attr);
        if (!name)
                return NULL;
        return helper_demangle(name, HELPER_MAX_NAME);
}

static void frames_clear(Frame *frames, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(frames[i].name);
}

/* Inline chain from DWARF scopes; returns the number of frames (0 = none). */
static size_t dwarf_frames(SymbolizeModule *m, Dwarf_Addr addr, Frame *frames) {
        Dwfl_Module *mod = m->mod;
        Dwarf_Addr bias = 0;
        Dwarf_Die *cudie = dwfl_module_addrdie(mod, addr, &bias);
        if (!cudie)
                return 0;
        /* innermost first: the function containing addr and its inlines
         * (dwarf-functions.h: one walk per unit, not per address) */
        Dwarf_Die scopes[HELPER_MAX_FRAMES];
        int nscopes = dwarf_functions_find(&m->functions, cudie, addr - bias, scopes, HELPER_MAX_FRAMES);
        if (nscopes <= 0)
                return 0;
        uint8_t source = m->dwarf_source;

        Dwarf_Files *files = NULL;
        size_t nfiles = 0;
        if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
                files = NULL;

        /* innermost position from the line table */
        const char *file = NULL;
        int line = 0, column = 0;
        Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
        if (l)
                file = dwfl_lineinfo(l, NULL, &line, &column, NULL, NULL);

        size_t n = 0;
        for (int i = 0; i < nscopes && n < HELPER_MAX_FRAMES; i++) {
                Dwarf_Die *s = &scopes[i];
                int tag = dwarf_tag(s);
                if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
                        continue;
                char *name = die_function_name(s);
                if (!name)
                        name = strdup("[unknown inline]");
                if (!name)
                        break;
                Frame *f = &frames[n++];
                *f = (Frame) { .name = name, .source = source };
                if (file && line > 0) {
                        f->file = file;
                        f->line = (uint32_t) line;
                        f->column = column > 0 ? (uint32_t) column : 0;
                        f->flags |= HELPER_FRAME_HAS_SOURCE;
                }
                Dwarf_Addr entry;
                if (dwarf_entrypc(s, &entry) == 0 && addr - bias >= entry)
                        f->offset = addr - bias - entry;
                if (tag == DW_TAG_subprogram)
                        break; /* the outermost function of this address */
                f->flags |= HELPER_FRAME_INLINED;
                /* the next outer frame sits at this inline's call site */
                file = NULL;
                line = column = 0;
                Dwarf_Attribute a;
                Dwarf_Word w;
                if (files && dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &a), &w) == 0 && w < nfiles)
                        file = dwarf_filesrc(files, w, NULL, NULL);
                if (dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &a), &w) == 0 && w <= INT32_MAX)
                        line = (int) w;
                if (dwarf_formudata(dwarf_attr(s, DW_AT_call_column, &a), &w) == 0 && w <= INT32_MAX)
                        column = (int) w;
        }
        return n;
}

/* One frame from a symbol table; returns 1 when a symbol covers addr. */
static size_t symtab_frame(const SymbolIndex *idx, Dwarf_Addr addr, Elf *main_elf, uint8_t other_source, Frame *f) {
        const SymbolIndexEntry *e = symbol_index_lookup(idx, addr);
        if (!e)
                return 0;
        char *d = helper_demangle(e->name, HELPER_MAX_NAME);
        if (!d)
                return 0;
        *f = (Frame) {
                .name = d,
                .offset = addr - e->start,
                .source = e->elf == main_elf ? HELPER_SOURCE_SYMTAB : other_source,
        };
        return 1;
}

static void encode_frames(HelperWriter *w, uint8_t status, Frame *frames, size_t n) {
        helper_put_u8(w, status);
        helper_put_u8(w, (uint8_t) n);
        helper_put_u16(w, 0);
        for (size_t i = 0; i < n; i++) {
                helper_utf8_sanitize(frames[i].name);
                helper_put_u8(w, frames[i].flags);
                helper_put_u8(w, frames[i].source);
                helper_put_u16(w, 0);
                helper_put_u32(w, frames[i].line);
                helper_put_u32(w, frames[i].column);
                helper_put_u64(w, frames[i].offset);
                if (!*frames[i].name)
                        helper_put_string(w, "?", HELPER_MAX_NAME);
                else
                        helper_put_string(w, frames[i].name, HELPER_MAX_NAME);
                if (frames[i].flags & HELPER_FRAME_HAS_SOURCE) {
                        _cleanup_free_ char *file = strndup(frames[i].file, HELPER_MAX_PATH);
                        if (file)
                                helper_utf8_sanitize(file);
                        helper_put_string(w, file ? file : "", HELPER_MAX_PATH);
                } else
                        helper_put_string(w, "", HELPER_MAX_PATH);
        }
}

int symbolize_request_run(SymbolizeCache *cache, int fd, int debug_fd, bool segment_offsets, const uint64_t *offsets,
                          size_t n, HelperWriter *w, const char **why) {
        SymbolizeModule *m = NULL;
        int r = symbolize_cache_get(cache, fd, debug_fd, &m, why);
        if (r < 0)
                return r;
        Elf *main_elf = m->main_elf;

        uint32_t sources = 0;
        HelperWriter body;
        helper_writer_init(&body, HELPER_MAX_PAYLOAD);
        for (size_t i = 0; i < n; i++) {
                Frame frames[HELPER_MAX_FRAMES];
                size_t nf = 0;
                uint64_t vaddr;
                if ((segment_offsets ? segment_offset_to_vaddr(main_elf, offsets[i], &vaddr)
                                     : offset_to_vaddr(main_elf, offsets[i], &vaddr)) < 0) {
                        encode_frames(&body, HELPER_ADDRESS_OUT_OF_FILE, NULL, 0);
                        continue;
                }
                Dwarf_Addr addr = vaddr + m->bias;
                if (m->dw)
                        nf = dwarf_frames(m, addr, frames);
                if (nf == 0 && m->mini_mod) {
                        nf = symtab_frame(&m->mini_syms, vaddr + m->mini_bias, NULL, HELPER_SOURCE_MINIDEBUGINFO, frames);
                        if (nf)
                                frames[0].source = HELPER_SOURCE_MINIDEBUGINFO;
                }
                if (nf == 0)
                        nf = symtab_frame(&m->syms, addr, main_elf, HELPER_SOURCE_DEBUG_FILE, frames);
                if (nf == 0) {
                        encode_frames(&body, HELPER_ADDRESS_NO_SYMBOL, NULL, 0);
                        continue;
                }
                for (size_t k = 0; k < nf; k++)
                        sources |= frames[k].source;
                encode_frames(&body, HELPER_ADDRESS_OK, frames, nf);
                frames_clear(frames, nf);
        }
        if (body.failed) {
                helper_writer_done(&body);
                return -E2BIG;
        }
        helper_put_u32(w, sources);
        helper_put_u32(w, (uint32_t) n);
        helper_put_bytes(w, body.data, body.size);
        helper_writer_done(&body);
        return w->failed ? -E2BIG : 0;
}
