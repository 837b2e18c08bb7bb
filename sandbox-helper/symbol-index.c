/* symbol-index.c: see symbol-index.h. Runs inside the sandbox only. */
#include "symbol-index.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>

static int compare_entries(const void *a, const void *b) {
        const SymbolIndexEntry *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        if (x->rank != y->rank)
                return x->rank < y->rank ? -1 : 1;
        return 0;
}

int symbol_index_build(Dwfl_Module *mod, SymbolIndex *ret) {
        *ret = (SymbolIndex) {};
        int n = dwfl_module_getsymtab(mod);
        if (n <= 0)
                return 0;
        SymbolIndexEntry *e = calloc((size_t) n, sizeof *e);
        if (!e)
                return -ENOMEM;
        size_t k = 0;
        for (int i = 1; i < n; i++) {
                GElf_Sym sym;
                GElf_Addr addr;
                GElf_Word shndx;
                Elf *elf = NULL;
                Dwarf_Addr bias = 0;
                const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
                int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
                if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
                    type == STT_TLS)
                        continue;
                uint64_t section_end = UINT64_MAX;
                Elf_Scn *scn = elf && shndx != SHN_UNDEF && shndx != SHN_ABS ? elf_getscn(elf, shndx) : NULL;
                GElf_Shdr sh;
                if (scn && gelf_getshdr(scn, &sh))
                        section_end = sh.sh_addr + bias + sh.sh_size;
                e[k++] = (SymbolIndexEntry) {
                        .start = addr,
                        .end = addr + sym.st_size < addr ? UINT64_MAX : addr + sym.st_size,
                        .section_end = section_end,
                        .name = name,
                        .elf = elf,
                        .rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
                };
        }
        qsort(e, k, sizeof *e, compare_entries);
        ret->entries = e;
        ret->n = k;
        return 0;
}

const SymbolIndexEntry *symbol_index_lookup(const SymbolIndex *idx, uint64_t addr) {
        /* first entry starting after addr */
        size_t lo = 0, hi = idx->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (idx->entries[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* walk down: the nearest sized symbol containing addr wins (entries
         * of one start are by rank); a sizeless one counts only when no sized
         * symbol starts between it and addr */
        const SymbolIndexEntry *sizeless = NULL;
        bool sized_between = false;
        for (size_t i = lo; i > 0; i--) {
                const SymbolIndexEntry *e = &idx->entries[i - 1];
                if (e->end > e->start) {
                        if (addr < e->end) {
                                /* the best-ranked sized symbol with this start */
                                while (i > 1 && idx->entries[i - 2].start == e->start &&
                                       idx->entries[i - 2].end > e->start && addr < idx->entries[i - 2].end)
                                        e = &idx->entries[--i - 1];
                                return e;
                        }
                        sized_between = true;
                        if (sizeless && sizeless->start == e->start)
                                sizeless = NULL; /* a sized symbol at the same place ends before addr */
                } else if (!sizeless && !sized_between && addr < e->section_end)
                        sizeless = e;
                /* sized symbols may nest (a function inside a larger object):
                 * look a bounded way further down for one that contains addr */
                if (lo - i >= 64)
                        break;
        }
        return sizeless;
}

void symbol_index_clear(SymbolIndex *idx) {
        free(idx->entries);
        *idx = (SymbolIndex) {};
}
