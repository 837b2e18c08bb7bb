/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dwarf-functions.c: see dwarf-functions.h. Runs inside the sandbox only. */
#include "dwarf-functions.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "basic.h"
#include "dwarf-scopes.h"

typedef struct Collect {
        DwarfFunctionRange *ranges;
        size_t n, capacity;
        unsigned visits, functions;
        bool failed;
} Collect;

static void add_ranges(Collect *c, Dwarf_Die *die) {
        Dwarf_Addr base, start, end;
        ptrdiff_t off = 0;
        for (unsigned k = 0; k < DWARF_FUNCTIONS_MAX_RANGES_PER_DIE && (off = dwarf_ranges(die, off, &base, &start, &end)) > 0;
             k++) {
                if (end <= start)
                        continue;
                if (c->n >= DWARF_FUNCTIONS_MAX_RANGES)
                        return;
                if (c->n == c->capacity) {
                        size_t cap = c->capacity ? c->capacity * 2 : 64;
                        DwarfFunctionRange *r = realloc(c->ranges, cap * sizeof *r);
                        if (!r) {
                                c->failed = true;
                                return;
                        }
                        c->ranges = r;
                        c->capacity = cap;
                }
                c->ranges[c->n++] = (DwarfFunctionRange) { .low = start, .high = end, .die = *die, .order = c->functions };
        }
}

/* The outermost code scopes under parent, through the DIEs that own
 * functions and the units it imports; never inside a function. */
static void collect(Collect *c, Dwarf_Die *parent, unsigned depth) {
        Dwarf_Die child;
        if (depth >= DWARF_SCOPES_MAX_DEPTH || dwarf_child(parent, &child) != 0)
                return;
        do {
                if (++c->visits > DWARF_SCOPES_MAX_VISITS || c->failed)
                        return;
                int tag = dwarf_tag(&child);
                if (dwarf_scopes_owns_functions(tag))
                        collect(c, &child, depth + 1);
                else if (tag == DW_TAG_imported_unit) {
                        Dwarf_Attribute a;
                        Dwarf_Die unit;
                        if (dwarf_attr(&child, DW_AT_import, &a) && dwarf_formref_die(&a, &unit))
                                collect(c, &unit, depth + 1);
                } else if (dwarf_scopes_is_code_scope(tag)) {
                        add_ranges(c, &child);
                        c->functions++;
                }
        } while (dwarf_siblingof(&child, &child) == 0);
}

static int compare_ranges(const void *a, const void *b) {
        const DwarfFunctionRange *x = a, *y = b;
        if (x->low != y->low)
                return x->low < y->low ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

static size_t slot_of(const DwarfFunctionIndex *idx, uint64_t key) {
        size_t mask = idx->capacity - 1, i = (size_t) ((key * 0x9e3779b97f4a7c15ull) >> 17) & mask;
        while (idx->units[i].cu_offset && idx->units[i].cu_offset != key)
                i = (i + 1) & mask;
        return i;
}

static int grow(DwarfFunctionIndex *idx) {
        DwarfFunctionIndex bigger = { .capacity = idx->capacity ? idx->capacity * 2 : 64 };
        bigger.units = calloc(bigger.capacity, sizeof *bigger.units);
        if (!bigger.units)
                return -ENOMEM;
        for (size_t i = 0; i < idx->capacity; i++)
                if (idx->units[i].cu_offset)
                        bigger.units[slot_of(&bigger, idx->units[i].cu_offset)] = idx->units[i];
        bigger.n_units = idx->n_units;
        free(idx->units);
        *idx = bigger;
        return 0;
}

/* The table of cudie's unit, built on first use. */
static const DwarfUnitFunctions *unit_functions(DwarfFunctionIndex *idx, Dwarf_Die *cudie) {
        uint64_t key = (uint64_t) dwarf_dieoffset(cudie) + 1; /* 0 marks an empty slot */
        if (idx->capacity) {
                size_t i = slot_of(idx, key);
                if (idx->units[i].cu_offset)
                        return &idx->units[i];
        }
        if ((idx->n_units + 1) * 2 > idx->capacity && grow(idx) < 0)
                return NULL;
        Collect c = {};
        collect(&c, cudie, 0);
        if (c.failed) {
                free(c.ranges);
                return NULL;
        }
        if (c.n > 0) /* a unit without functions has no array (qsort wants one) */
                qsort(c.ranges, c.n, sizeof *c.ranges, compare_ranges);
        DwarfUnitFunctions *u = &idx->units[slot_of(idx, key)];
        *u = (DwarfUnitFunctions) { .cu_offset = key, .ranges = c.ranges, .n = c.n };
        idx->n_units++;
        return u;
}

int dwarf_functions_find(DwarfFunctionIndex *idx, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *scopes, size_t max) {
        const DwarfUnitFunctions *u = unit_functions(idx, cudie);
        if (!u)
                return -ENOMEM;
        if (max == 0)
                return 0;
        /* the last range starting at or before pc, then back a bounded way
         * for overlapping ones: of those containing pc, the first DIE wins */
        size_t lo = FIRST_ABOVE(u->ranges, u->n, low, pc);
        const DwarfFunctionRange *found = NULL;
        for (size_t i = lo; i > 0 && lo - i < 64; i--)
                if (pc < u->ranges[i - 1].high && (!found || u->ranges[i - 1].order < found->order))
                        found = &u->ranges[i - 1];
        if (!found)
                return 0;
        /* the function, then its inline chain inside it */
        Dwarf_Die path[64];
        size_t cap = max < 64 ? max : 64;
        path[0] = found->die;
        int n = dwarf_scopes_find_functions(&path[0], pc, path + 1, cap - 1);
        size_t total = 1 + (n > 0 ? (size_t) n : 0);
        for (size_t i = 0; i < total; i++)
                scopes[i] = path[total - 1 - i];
        return (int) total;
}

void dwarf_functions_clear(DwarfFunctionIndex *idx) {
        for (size_t i = 0; i < idx->capacity; i++)
                free(idx->units[i].ranges);
        free(idx->units);
        *idx = (DwarfFunctionIndex) {};
}
