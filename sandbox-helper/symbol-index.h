/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbol-index.h: a sorted index of a module's symbol table, built once per
 * file the helper symbolizes (symbolize-module.h), so that naming n
 * addresses costs one pass over the symbols plus n binary searches. libdwfl's dwfl_module_addrinfo scans
 * every symbol for every address (2000 addresses in node's 185,000
 * symbols: seconds). Lookups follow dwfl_module_addrinfo's rules: a sized
 * symbol containing the address (global before weak before local), else
 * the closest sizeless symbol below it in the same section with no sized
 * symbol in between. */
#pragma once

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SymbolIndexEntry {
        uint64_t start, end;   /* module addresses; end == start for a sizeless symbol */
        uint64_t section_end;  /* end of the symbol's section (sizeless symbols stop there) */
        const char *name;      /* owned by libelf */
        Elf *elf;              /* the ELF file holding the symbol table */
        uint8_t rank;          /* 0 global, 1 weak, 2 local: lower wins a tie */
} SymbolIndexEntry;

typedef struct SymbolIndex {
        SymbolIndexEntry *entries; /* by start */
        size_t n;
} SymbolIndex;

/* Reads mod's symbol table (what dwfl_module_addrinfo would search) into
 * an index. Returns 0 (an empty index when there are no symbols) or -ENOMEM. */
int symbol_index_build(Dwfl_Module *mod, SymbolIndex *ret);

/* The symbol naming the module address addr, or NULL. */
const SymbolIndexEntry *symbol_index_lookup(const SymbolIndex *idx, uint64_t addr);

/* Frees the entries. */
void symbol_index_clear(SymbolIndex *idx);
