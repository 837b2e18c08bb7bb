/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbol-index.c: see symbol-index.h. Runs inside the sandbox only. */
#include "symbol-index.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

/* A sort key: the entry's start and rank, and where the entry is. */
typedef struct SortKey {
        uint64_t start;
        uint32_t index;
        uint8_t rank;
} SortKey;

#define RADIX_BITS 11u
#define RADIX_BUCKETS (1u << RADIX_BITS)

/* Stable counting sort of keys by digit(key) into out. */
static void counting_pass(const SortKey *keys, SortKey *out, size_t n, unsigned shift, bool by_rank, size_t *count) {
        memset(count, 0, RADIX_BUCKETS * sizeof *count);
        for (size_t i = 0; i < n; i++)
                count[by_rank ? keys[i].rank : (keys[i].start >> shift) & (RADIX_BUCKETS - 1)]++;
        size_t sum = 0;
        for (size_t b = 0; b < RADIX_BUCKETS; b++) {
                size_t c = count[b];
                count[b] = sum;
                sum += c;
        }
        for (size_t i = 0; i < n; i++)
                out[count[by_rank ? keys[i].rank : (keys[i].start >> shift) & (RADIX_BUCKETS - 1)]++] = keys[i];
}

/* Orders e[0..n) by start, then rank: an LSD radix sort of small keys (a
 * few passes over 16-byte keys; digits every key shares are skipped), then
 * gather into a new array. qsort of the entries took most of the time of naming a
 * batch of addresses in a large binary. */
static int sort_entries(SymbolIndexEntry **entries, size_t n) {
        const SymbolIndexEntry *e = *entries;
        _cleanup_free_ SortKey *keys = malloc(n * sizeof *keys), *tmp = malloc(n * sizeof *tmp);
        _cleanup_free_ size_t *count = malloc(RADIX_BUCKETS * sizeof *count);
        _cleanup_free_ SymbolIndexEntry *sorted = malloc(n * sizeof *sorted);
        if (!keys || !tmp || !count || !sorted)
                return -ENOMEM;
        uint64_t all_or = 0, all_and = UINT64_MAX;
        for (size_t i = 0; i < n; i++) {
                keys[i] = (SortKey) { .start = e[i].start, .index = (uint32_t) i, .rank = e[i].rank };
                all_or |= e[i].start;
                all_and &= e[i].start;
        }
        uint64_t varying = all_or ^ all_and; /* bits that differ between some keys */
        counting_pass(keys, tmp, n, 0, true, count);
        SortKey *from = tmp, *to = keys;
        for (unsigned shift = 0; shift < 64; shift += RADIX_BITS) {
                if (!((varying >> shift) & (RADIX_BUCKETS - 1)))
                        continue;
                counting_pass(from, to, n, shift, false, count);
                SortKey *t = from;
                from = to;
                to = t;
        }
        for (size_t i = 0; i < n; i++)
                sorted[i] = e[from[i].index];
        free(*entries);
        *entries = TAKE_PTR(sorted);
        return 0;
}

static bool symbol_type_names_code(int type) {
        /* NOTYPE: assembly labels, which are often code */
        return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}

/* AArch64 and ARM mapping symbols ($x code, $d data, $a, $t, with an
 * optional ".N"): local labels that say what kind of bytes follow, never a
 * function's name. */
static bool is_mapping_symbol(const char *name, int type, int bind) {
        return type == STT_NOTYPE && bind == STB_LOCAL && name[0] == '$' && name[1] != '\0' &&
               strchr("xdat", name[1]) && (name[2] == '\0' || name[2] == '.');
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
        /* symbols come grouped by section: remember the last section's end */
        Elf *last_elf = NULL;
        GElf_Word last_shndx = SHN_UNDEF;
        uint64_t last_end = UINT64_MAX;
        for (int i = 1; i < n; i++) {
                GElf_Sym sym;
                GElf_Addr addr;
                GElf_Word shndx;
                Elf *elf = NULL;
                Dwarf_Addr bias = 0;
                const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
                int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
                /* st_name 0 is the empty name; other empty names are skipped
                 * by the lookup (reading every name here would touch the
                 * whole string table) */
                /* Only code names code: data objects (OBJECT, COMMON, TLS)
                 * and absolute symbols (a stripped library's version nodes,
                 * "libjansson.so.4" or "ZLIB_1.2.9" at address 0) would
                 * otherwise name every address no function covers. */
                if (!name || sym.st_name == 0 || sym.st_shndx == SHN_UNDEF || shndx == SHN_ABS ||
                    !symbol_type_names_code(type) || is_mapping_symbol(name, type, bind))
                        continue;
                if (elf != last_elf || shndx != last_shndx) {
                        last_elf = elf;
                        last_shndx = shndx;
                        last_end = UINT64_MAX;
                        Elf_Scn *scn = elf && shndx != SHN_UNDEF && shndx != SHN_ABS ? elf_getscn(elf, shndx) : NULL;
                        GElf_Shdr sh;
                        if (scn && gelf_getshdr(scn, &sh))
                                last_end = sh.sh_addr + bias + sh.sh_size;
                }
                uint64_t section_end = last_end;
                e[k++] = (SymbolIndexEntry) {
                        .start = addr,
                        .end = addr + sym.st_size < addr ? UINT64_MAX : addr + sym.st_size,
                        .section_end = section_end,
                        .name = name,
                        .elf = elf,
                        .rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
                };
        }
        if (k > 1 && sort_entries(&e, k) < 0) {
                free(e);
                return -ENOMEM;
        }
        ret->entries = e;
        ret->n = k;
        return 0;
}

const SymbolIndexEntry *symbol_index_lookup(const SymbolIndex *idx, uint64_t addr) {
        /* first entry starting after addr */
        size_t lo = FIRST_ABOVE(idx->entries, idx->n, start, addr);
        /* walk down: the nearest sized symbol containing addr wins (entries
         * of one start are by rank); a sizeless one counts only when no sized
         * symbol starts between it and addr */
        const SymbolIndexEntry *sizeless = NULL;
        bool sized_between = false;
        for (size_t i = lo; i > 0; i--) {
                /* sized symbols may nest (a function inside a larger object):
                 * look a bounded way further down for one that contains addr */
                if (lo - i > 64)
                        break;
                const SymbolIndexEntry *e = &idx->entries[i - 1];
                if (!*e->name)
                        continue; /* a symbol without a name names nothing */
                if (e->end > e->start) {
                        if (addr < e->end) {
                                /* the best-ranked sized symbol with this start */
                                while (i > 1 && idx->entries[i - 2].start == e->start &&
                                       idx->entries[i - 2].end > e->start && addr < idx->entries[i - 2].end &&
                                       *idx->entries[i - 2].name)
                                        e = &idx->entries[--i - 1];
                                return e;
                        }
                        sized_between = true;
                        if (sizeless && sizeless->start == e->start)
                                sizeless = NULL; /* a sized symbol at the same place ends before addr */
                } else if (!sizeless && !sized_between && addr < e->section_end)
                        sizeless = e;
        }
        return sizeless;
}

void symbol_index_clear(SymbolIndex *idx) {
        free(idx->entries);
        *idx = (SymbolIndex) {};
}
