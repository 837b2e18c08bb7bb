/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-stack-choose.c: a sample's stack from the unwinder (DWARF, or fp
 * waiting for its leaf's table) or straight from the frame pointers: the
 * one entry the pump calls (sample-stack-choose.h). */
#include "sample-stack-choose.h"

#include <errno.h>
#include <string.h>

#include "basic.h"

size_t sample_stack_build(const SampleStackContext *ctx, const PerfSample *s, uint64_t *addrs, size_t max) {
        size_t n = 0;
        if (max < 2)
                return 0;
        if (ctx->unwind != RECORD_UNWIND_FP && ctx->unwinder && ctx->deferred)
                return sample_unwinder_build(ctx->unwinder, ctx->maps, ctx->kernel, s, addrs, max, ctx->deferred);
        /* fp with the leaf decision: waits in the unwinder's queue for the
         * leaf's table (and behind what waits there: samples stay in order) */
        if (ctx->tables && ctx->unwinder && ctx->deferred)
                return sample_unwinder_build_fp(ctx->unwinder, ctx->maps, ctx->kernel, s, addrs, max, ctx->deferred);
        (void) sample_stack_build_fp(ctx->tables, ctx->owner, ctx->maps, ctx->kernel, true, s, addrs, max, &n);
        return n;
}

static const char *const unwind_names[_RECORD_UNWIND_MAX] = {
        [RECORD_UNWIND_FP] = "fp",
        [RECORD_UNWIND_DWARF] = "dwarf",
        [RECORD_UNWIND_AUTO] = "auto",
};

const char *record_unwind_to_string(RecordUnwind u) {
        return (size_t) u < ELEMENTSOF(unwind_names) ? unwind_names[u] : "unknown";
}

int record_unwind_from_string(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(unwind_names); i++)
                if (strcmp(s, unwind_names[i]) == 0)
                        return (int) i;
        return -EINVAL;
}
