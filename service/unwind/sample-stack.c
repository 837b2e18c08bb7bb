/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-stack.c: the frame-pointer stack of a sample, filtered. */
#include "sample-stack.h"

#include <errno.h>
#include <string.h>

#include "basic.h"
#include "capture.h"

size_t sample_stack_build(const SampleStackContext *ctx, const PerfSample *s, uint64_t *addrs, size_t max) {
        size_t n = 0;
        if (max < 2)
                return 0;
        if (ctx->unwind != RECORD_UNWIND_FP && ctx->unwinder && ctx->deferred)
                return sample_unwinder_build(ctx->unwinder, ctx->maps, ctx->kernel, s, addrs, max, ctx->deferred);
        if (s->n_callchain == 0) {
                if (!s->user_mode && !ctx->kernel)
                        return 0;
                addrs[n++] = s->user_mode ? CAPTURE_CONTEXT_USER : CAPTURE_CONTEXT_KERNEL;
                addrs[n++] = s->ip;
                return n;
        }
        bool keep = false;
        for (uint64_t i = 0; i < s->n_callchain && n < max; i++) {
                uint64_t a = s->callchain[i];
                if (capture_address_is_context(a)) {
                        keep = a == CAPTURE_CONTEXT_USER || (a == CAPTURE_CONTEXT_KERNEL && ctx->kernel);
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
