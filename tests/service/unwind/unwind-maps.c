/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-maps.c: sorted, non-overlapping executable mappings of one process. */
#include "unwind-maps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

static int reserve(UnwindMaps *maps, size_t extra) {
        if (maps->n_mappings + extra <= maps->allocated)
                return 0;
        size_t n = maps->allocated ? maps->allocated * 2 : 64;
        while (n < maps->n_mappings + extra)
                n *= 2;
        UnwindMapping *p = reallocarray(maps->mappings, n, sizeof(UnwindMapping));
        if (!p)
                return -ENOMEM;
        maps->mappings = p;
        maps->allocated = n;
        return 0;
}

/* Index of the first mapping whose end lies above addr. */
static size_t first_ending_after(const UnwindMaps *maps, uint64_t addr) {
        return FIRST_ABOVE(maps->mappings, maps->n_mappings, end, addr);
}

int unwind_maps_remove(UnwindMaps *maps, uint64_t start, uint64_t end) {
        size_t i;
        int r;

        if (end <= start)
                return -EINVAL;
        /* Splitting one mapping in two needs one more slot. */
        r = reserve(maps, 1);
        if (r < 0)
                return r;
        i = first_ending_after(maps, start);
        while (i < maps->n_mappings && maps->mappings[i].start < end) {
                UnwindMapping *m = &maps->mappings[i];
                if (m->start < start && m->end > end) {
                        UnwindMapping tail = *m;
                        tail.pgoff += end - m->start;
                        tail.start = end;
                        m->end = start;
                        memmove(m + 2, m + 1, (maps->n_mappings - i - 1) * sizeof(UnwindMapping));
                        m[1] = tail;
                        maps->n_mappings++;
                        return 0;
                }
                if (m->start < start) {
                        m->end = start;
                        i++;
                } else if (m->end > end) {
                        m->pgoff += end - m->start;
                        m->start = end;
                        i++;
                } else {
                        memmove(m, m + 1, (maps->n_mappings - i - 1) * sizeof(UnwindMapping));
                        maps->n_mappings--;
                }
        }
        return 0;
}

int unwind_maps_add(UnwindMaps *maps, uint64_t start, uint64_t end, uint64_t pgoff, const UnwindTable *table) {
        size_t i;
        int r;

        if (end <= start)
                return -EINVAL;
        r = unwind_maps_remove(maps, start, end);
        if (r < 0)
                return r;
        r = reserve(maps, 1);
        if (r < 0)
                return r;
        i = first_ending_after(maps, start);
        memmove(&maps->mappings[i + 1], &maps->mappings[i], (maps->n_mappings - i) * sizeof(UnwindMapping));
        maps->mappings[i] = (UnwindMapping){ .start = start, .end = end, .pgoff = pgoff, .table = table };
        maps->n_mappings++;
        return 0;
}

int unwind_maps_add_jit(UnwindMaps *maps, uint64_t start, uint64_t end) {
        int r = unwind_maps_add(maps, start, end, 0, NULL);
        if (r < 0)
                return r;
        maps->mappings[first_ending_after(maps, start)].jit = true;
        return 0;
}

void unwind_maps_set_table(UnwindMaps *maps, uint64_t start, uint64_t end, const UnwindTable *table) {
        size_t i = first_ending_after(maps, start);
        if (i < maps->n_mappings && maps->mappings[i].start == start && maps->mappings[i].end == end)
                maps->mappings[i].table = table;
}

bool unwind_maps_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit) {
        const UnwindMaps *maps = userdata;
        size_t i = first_ending_after(maps, ip);

        if (i >= maps->n_mappings || maps->mappings[i].start > ip)
                return false;
        *table = maps->mappings[i].table;
        *jit = maps->mappings[i].jit;
        *offset = ip - maps->mappings[i].start + maps->mappings[i].pgoff;
        return true;
}

void unwind_maps_clear(UnwindMaps *maps) {
        free(maps->mappings);
        *maps = (UnwindMaps) {};
}
