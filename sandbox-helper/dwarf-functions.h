/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dwarf-functions.h: which function of a compile unit contains an
 * address, without walking the unit's DIE tree for every address. The
 * first address asked in a unit walks it once (through namespaces, types
 * and imported units, as dwarf-scopes.h does) and keeps the address ranges
 * of its outermost functions, sorted; every later address of that unit is
 * a binary search, then a walk inside the one function found (its inline
 * chain). libdw's dwarf_getscopes visits every DIE of the unit per
 * address: with node's large units that was most of the time of naming a
 * batch of addresses. Runs inside the sandbox only. */
#pragma once

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

typedef struct DwarfFunctionRange {
        Dwarf_Addr low, high; /* CU-relative, as dwarf_haspc takes them */
        Dwarf_Die die;        /* a DW_TAG_subprogram (or another code scope) */
        uint32_t order;       /* the DIE's place in the unit: of two that both
                               * contain an address (aliases of one assembly
                               * routine), the first wins, as in dwarf_getscopes */
} DwarfFunctionRange;

typedef struct DwarfUnitFunctions {
        uint64_t cu_offset;   /* the unit's DIE offset; 0: empty slot */
        DwarfFunctionRange *ranges; /* by low */
        size_t n;
} DwarfUnitFunctions;

/* The units seen so far, by DIE offset (open addressing). */
typedef struct DwarfFunctionIndex {
        DwarfUnitFunctions *units;
        size_t n_units, capacity;
} DwarfFunctionIndex;

/* Limits on hostile DWARF: ranges kept per unit, per function. */
#define DWARF_FUNCTIONS_MAX_RANGES (1u << 20)
#define DWARF_FUNCTIONS_MAX_RANGES_PER_DIE 4096u

/* Fills scopes[0..max) with the DW_TAG_subprogram and
 * DW_TAG_inlined_subroutine DIEs that contain pc (CU-relative) in the unit
 * cudie, innermost first (the chain dwarf_getscopes would give). Returns
 * how many (0: no function of the unit contains pc), or -ENOMEM. */
int dwarf_functions_find(DwarfFunctionIndex *idx, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *scopes, size_t max);

/* Frees every unit's table. */
void dwarf_functions_clear(DwarfFunctionIndex *idx);
