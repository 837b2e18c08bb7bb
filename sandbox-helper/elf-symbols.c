/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf-symbols.c: ELF_SYMBOLS: st_value and st_size of named symbols from
 * .dynsym and .symtab with libelf, and the executable PT_LOAD holding the
 * mapping's file offset, so the daemon can place them in a process. */
#include "elf-symbols.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

#define ELF_SYMBOLS_MAX_SECTIONS 65536u
#define ELF_SYMBOLS_MAX_ENTRIES (16u << 20) /* symbols looked at per table */

typedef struct Wanted {
        char *name;
        bool found;
        uint64_t value, size;
} Wanted;

/* The symbols of one table (SHT_DYNSYM or SHT_SYMTAB) that are still wanted. */
static void scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, Wanted *w, size_t n) {
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || shdr->sh_entsize == 0)
                return;
        size_t count = shdr->sh_size / shdr->sh_entsize;
        if (count > ELF_SYMBOLS_MAX_ENTRIES)
                count = ELF_SYMBOLS_MAX_ENTRIES;
        for (size_t i = 0; i < count; i++) {
                GElf_Sym sym;
                if (!gelf_getsym(data, (int) i, &sym))
                        break;
                if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0)
                        continue;
                const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
                if (!name)
                        continue;
                for (size_t k = 0; k < n; k++)
                        if (!w[k].found && strcmp(name, w[k].name) == 0) {
                                w[k].found = true;
                                w[k].value = sym.st_value;
                                w[k].size = sym.st_size;
                        }
        }
}

static void scan(Elf *elf, Wanted *w, size_t n) {
        static const GElf_Word types[] = { SHT_DYNSYM, SHT_SYMTAB };
        for (size_t t = 0; t < ELEMENTSOF(types); t++) {
                size_t n_sections = 0;
                for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                        if (++n_sections > ELF_SYMBOLS_MAX_SECTIONS)
                                break;
                        GElf_Shdr shdr;
                        if (gelf_getshdr(scn, &shdr) && shdr.sh_type == types[t])
                                scan_table(elf, scn, &shdr, w, n);
                }
        }
}

/* The executable PT_LOAD whose file bytes hold pgoff. */
static int exec_segment(Elf *elf, uint64_t pgoff, GElf_Phdr *ret) {
        size_t n;
        if (elf_getphdrnum(elf, &n) != 0)
                return -ENOEXEC;
        for (size_t i = 0; i < n && i < ELF_SYMBOLS_MAX_SECTIONS; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
                        continue;
                /* the mapping starts at the page holding p_offset */
                uint64_t start = ph.p_offset & ~(uint64_t) 4095;
                if (pgoff >= start && pgoff - start <= ph.p_filesz + (ph.p_offset - start)) {
                        *ret = ph;
                        return 0;
                }
        }
        return -ENOENT;
}

int elf_symbols_run(HelperReader *rd, int fd, HelperWriter *out, const char **what) {
        Wanted w[HELPER_MAX_ELF_SYMBOLS] = {};
        size_t n = 0;
        int r = -EBADMSG;
        *what = "malformed ELF_SYMBOLS request";
        uint64_t pgoff = helper_get_u64(rd);
        uint32_t count = helper_get_u32(rd);
        if (rd->failed || count == 0 || count > HELPER_MAX_ELF_SYMBOLS)
                return -EBADMSG;
        for (; n < count; n++) {
                w[n].name = helper_get_string(rd, HELPER_MAX_FIELD, false);
                if (!w[n].name || !*w[n].name)
                        goto out;
        }
        if (!helper_reader_finished(rd))
                goto out;

        *what = "cannot read ELF file";
        r = -ENOEXEC;
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                goto out;
        GElf_Ehdr ehdr;
        GElf_Phdr ph = {};
        if (elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr)) {
                r = exec_segment(elf, pgoff, &ph);
                if (r < 0)
                        *what = "no executable segment at that offset";
        }
        if (r >= 0) {
                scan(elf, w, n);
                helper_put_u64(out, ph.p_vaddr);
                helper_put_u64(out, ph.p_offset);
                for (size_t k = 0; k < n; k++) {
                        helper_put_u8(out, w[k].found);
                        helper_put_u64(out, w[k].found ? w[k].value : 0);
                        helper_put_u64(out, w[k].found ? w[k].size : 0);
                }
        }
        elf_end(elf);
out:
        for (size_t k = 0; k < ELEMENTSOF(w); k++)
                free(w[k].name);
        return r;
}
