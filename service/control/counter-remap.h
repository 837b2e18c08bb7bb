/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-remap.h: maps the counter ids that programs choose for themselves
 * (Sysprof's collector derives them from the pid) to ids that are unique in
 * one capture. Keyed by (pid, id); bounded, so a hostile program cannot make
 * it grow without limit. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "counters.h"

typedef struct CounterRemap CounterRemap;

/* A table that holds at most max_entries mappings. */
int counter_remap_new(size_t max_entries, CounterRemap **ret);
CounterRemap *counter_remap_free(CounterRemap *m);

/* The capture id for (pid, id), allocating one from ids on first sight.
 * Returns the id (> 0), -ENOSPC when the table or the id space is full. */
int64_t counter_remap_define(CounterRemap *m, CounterIdAllocator *ids, int32_t pid, uint32_t id);

/* The capture id for (pid, id), or 0 if it was never defined. */
uint32_t counter_remap_lookup(const CounterRemap *m, int32_t pid, uint32_t id);

size_t counter_remap_size(const CounterRemap *m);
