/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-stack.c: the frame-pointer stack of a sample, filtered. */
#include "sample-stack.h"

#include <string.h>

#include "basic.h"
#include "capture.h"
#include "sample-regs.h"

/* aarch64 frame-pointer mode: puts the leaf's caller (the sampled LR) after
 * the leaf when the leaf's row says the return address is still in LR. A
 * file whose table is not decided yet is asked for and returns false (the
 * sample waits for it), unless `force`: then the file counts as one
 * without a table. */
static bool fp_leaf_fixup(UnwindTables *tables, uint32_t owner, const ProcessMaps *maps, bool force,
                          const PerfSample *s, uint64_t *addrs, size_t *n, size_t max) {
        const ProcessMapping *m;
        const UnwindTable *table;
        const UnwindRow *row;
        UnwindRegs regs;
        uint64_t caller;
        size_t u = 0;
        bool known;

        if (!tables || !maps || *n >= max || !sample_unwind_regs(s, maps, &regs))
                return true;
        /* the leaf: the first address after the user marker, the sampled pc */
        while (u < *n && addrs[u] != CAPTURE_CONTEXT_USER)
                u++;
        if (u + 1 >= *n || addrs[u + 1] != regs.ip)
                return true;
        u++;
        m = process_maps_lookup_at(maps, (int32_t) s->pid, regs.ip, (int64_t) s->time);
        if (!m)
                return true;
        table = unwind_tables_peek(tables, m, &known);
        if (!known) {
                /* > 0: decided right away (a cached table) */
                int r = unwind_tables_request(tables, owner, (int32_t) s->pid, m, true);
                if (r > 0)
                        table = unwind_tables_peek(tables, m, &known);
                else if (r == 0 && !force)
                        return false;
        }
        if (regs.arch != UNWIND_ARCH_AARCH64)
                return true;
        row = table && table->arch == UNWIND_ARCH_AARCH64 ? unwind_table_lookup(table, regs.ip - m->start + m->pgoff)
                                                          : NULL;
        if (!unwinder_fp_leaf_caller(&regs, row, table != NULL, u + 1 < *n ? addrs[u + 1] : 0, &caller) ||
            (u + 1 < *n && addrs[u + 1] == caller))
                return true;
        memmove(addrs + u + 2, addrs + u + 1, (*n - u - 1) * sizeof(uint64_t));
        addrs[u + 1] = caller;
        (*n)++;
        return true;
}

bool sample_stack_build_fp(UnwindTables *tables, uint32_t owner, const ProcessMaps *maps, bool kernel, bool force,
                           const PerfSample *s, uint64_t *addrs, size_t max, size_t *ret_n) {
        size_t n = 0;
        *ret_n = 0;
        if (max < 2)
                return true;
        if (s->n_callchain == 0) {
                if (!s->user_mode && !kernel)
                        return true;
                addrs[n++] = s->user_mode ? CAPTURE_CONTEXT_USER : CAPTURE_CONTEXT_KERNEL;
                addrs[n++] = s->ip;
                *ret_n = n;
                return true;
        }
        bool keep = false;
        for (uint64_t i = 0; i < s->n_callchain && n < max; i++) {
                uint64_t a = s->callchain[i];
                if (capture_address_is_context(a)) {
                        keep = a == CAPTURE_CONTEXT_USER || (a == CAPTURE_CONTEXT_KERNEL && kernel);
                        /* Never end the list with a marker that has nothing after it. */
                        if (keep && n + 1 < max)
                                addrs[n++] = a;
                        else
                                keep = false;
                        continue;
                }
                if (keep)
                        addrs[n++] = a;
        }
        /* Drop a trailing marker (its part was empty). */
        if (n > 0 && capture_address_is_context(addrs[n - 1]))
                n--;
        if (!fp_leaf_fixup(tables, owner, maps, force, s, addrs, &n, max))
                return false;
        *ret_n = n;
        return true;
}
