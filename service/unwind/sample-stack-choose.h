/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-stack-choose.h: the one entry the pump calls for a sample's stack:
 * chooses between the DWARF unwinder (sample-unwind.h) and the frame
 * pointers (sample-stack.h), both below it. The unwinder falls back to the
 * frame pointers, so neither of those two headers can own this choice
 * without a circle. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf.h"
#include "process.h"
#include "sample-stack.h"
#include "sample-unwind.h"

/* How user stacks are taken (Record()'s option "unwind"). */
typedef enum RecordUnwind {
        RECORD_UNWIND_FP,    /* frame pointers: the kernel's callchain */
        RECORD_UNWIND_DWARF, /* copied stacks and CFI tables (docs/unwinding.md) */
        RECORD_UNWIND_AUTO,
        _RECORD_UNWIND_MAX,
} RecordUnwind;

/* Name of an unwind mode ("fp"), and back (-EINVAL for no mode's name). */
const char *record_unwind_to_string(RecordUnwind u);
int record_unwind_from_string(const char *s);

typedef struct SampleStackContext {
        bool kernel; /* keep kernel addresses (the caller may see them) */
        RecordUnwind unwind;
        const ProcessMaps *maps;  /* the recording's mappings, for unwinders */
        SampleUnwinder *unwinder; /* dwarf/auto: the recording's unwinder (NULL: fp) */
        bool *deferred;           /* dwarf/auto: set when the sample was queued (see sample-unwind.h) */
        UnwindTables *tables;     /* fp on aarch64: the tables that say whether a leaf saved LR yet */
        uint32_t owner;           /* whose samples (the uid), for asking for a table */
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
