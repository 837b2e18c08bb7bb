/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-maps.h: one process's executable mappings as the unwinder sees
 * them: address range, file offset, and the validated table of the mapped
 * file (NULL for code without one, such as JIT code). Sorted and
 * non-overlapping, so finding the code for an IP is a binary search. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind-table.h"

typedef struct UnwindMapping {
        uint64_t start, end;          /* [start, end) */
        uint64_t pgoff;               /* file offset mapped at start */
        const UnwindTable *table;     /* borrowed (table cache); may be NULL */
        bool jit;                     /* anonymous executable memory (no table by nature) */
} UnwindMapping;

typedef struct UnwindMaps {
        UnwindMapping *mappings;
        size_t n_mappings, allocated;
} UnwindMaps;

/* Adds a mapping; any part of older mappings it overlaps is dropped, as a
 * new mmap replaces what was mapped there. Returns 0 or -ENOMEM/-EINVAL. */
int unwind_maps_add(UnwindMaps *maps, uint64_t start, uint64_t end, uint64_t pgoff, const UnwindTable *table);

/* Adds anonymous executable memory (JIT code) at [start, end). */
int unwind_maps_add_jit(UnwindMaps *maps, uint64_t start, uint64_t end);

/* Forgets [start, end) (munmap). */
int unwind_maps_remove(UnwindMaps *maps, uint64_t start, uint64_t end);

/* Sets the table of every mapping whose start..end equals the given range
 * (a table compiled after the mapping was first seen). */
void unwind_maps_set_table(UnwindMaps *maps, uint64_t start, uint64_t end, const UnwindTable *table);

/* UnwindFindFunc for unwinder_unwind(): userdata is the UnwindMaps. */
bool unwind_maps_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit);

/* Frees the mapping array (tables are borrowed, not freed). */
void unwind_maps_clear(UnwindMaps *maps);
