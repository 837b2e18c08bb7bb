/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-stack.h: turns one decoded perf sample into the address list of a
 * SAMPLE frame (innermost first, with PERF_CONTEXT_* markers, as Sysprof
 * stores them). This is the single place where stacks are built: the frame-
 * pointer path copies the kernel's callchain; the DWARF unwinder plugs in
 * here and replaces the user part using sample->regs/stack. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf.h"
#include "process.h"
#include "sample-unwind.h"

/* How user stacks are taken (Record()'s option "unwind"). */
typedef enum RecordUnwind {
        RECORD_UNWIND_FP,          /* frame pointers: the kernel's callchain */
        RECORD_UNWIND_DWARF,       /* copied stacks and CFI tables (docs/unwinding.md) */
        RECORD_UNWIND_AUTO,
        _RECORD_UNWIND_MAX,
} RecordUnwind;

/* Name of an unwind mode ("fp"), and back (-EINVAL for no mode's name). */
const char *record_unwind_to_string(RecordUnwind u);
int record_unwind_from_string(const char *s);

typedef struct SampleStackContext {
        bool kernel;               /* keep kernel addresses (the caller may see them) */
        RecordUnwind unwind;
        const ProcessMaps *maps;   /* the recording's mappings, for unwinders */
        SampleUnwinder *unwinder;  /* dwarf/auto: the recording's unwinder (NULL: fp) */
        bool *deferred;            /* dwarf/auto: set when the sample was queued (see sample-unwind.h) */
        UnwindTables *tables;      /* fp on aarch64: the tables that say whether a leaf saved LR yet */
        uint32_t owner;            /* whose samples (the uid), for asking for a table */
} SampleStackContext;

/* Writes at most max addresses for sample s to addrs; returns how many.
 * Kernel parts are dropped unless ctx->kernel; guest and hypervisor parts
 * are always dropped. A sample without callchain yields its ip alone.
 * Frame-pointer mode on aarch64 (the sample carries SAMPLE_UNWIND_REGS_MASK
 * and ctx->tables is set): when the leaf's CFI says its return address is
 * still in LR, the sampled LR goes in after the leaf, where the kernel's
 * frame-pointer chain skips the leaf's caller (docs/unwinding.md). With
 * ctx->unwinder and ctx->deferred too, a sample whose leaf's table is not
 * decided yet is queued there (0, *deferred set) like a DWARF one. */
size_t sample_stack_build(const SampleStackContext *ctx, const PerfSample *s, uint64_t *addrs, size_t max);

/* The frame-pointer path of sample_stack_build() with the leaf decision of
 * the tables (NULL: none): writes *ret_n addresses, or returns false when
 * the leaf's table is still compiling (asked for) and not `force`. */
bool sample_stack_build_fp(UnwindTables *tables, uint32_t owner, const ProcessMaps *maps, bool kernel, bool force,
                           const PerfSample *s, uint64_t *addrs, size_t max, size_t *ret_n);
