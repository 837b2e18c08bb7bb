/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample-unwind.h: the DWARF path of sample-stack: the kernel part of a
 * sample from its callchain (up to the user marker), then
 * CAPTURE_CONTEXT_USER and the user frames unwound from the copied stack
 * (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER) with the tables of
 * unwind-tables.h.
 *
 * Tables are compiled by the helper off the event loop (unwind-tables.h),
 * asked for when an executable mapping appears (sample_unwinder_prepare())
 * or at the first sample that needs them. A sample whose table is not
 * there yet is copied into a short queue (and every later sample after
 * it, so samples stay in order), and sample_unwinder_flush() writes the
 * queued samples whose tables came: after each drain, and whenever the
 * tables' listener hears of a decided file. Nothing here waits for the
 * helper. The copied stack is never stored beyond that queue and never
 * written to the capture. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf.h"
#include "process.h"
#include "sample-regs.h"
#include "unwind-tables.h"
#include "unwinder.h"

/* Register mask the DWARF path asks perf for (perf-regs.h): x86-64 bp, sp,
 * ip; aarch64 x29, x30, sp, pc. */
#define SAMPLE_UNWIND_REGS_MASK PERF_REGS_UNWIND_MASK

/* Whether frame-pointer mode samples those registers too: on aarch64 a
 * leaf that has not stored its frame record keeps its caller in LR only
 * (sample-stack.h). */
#if defined(__aarch64__)
#define SAMPLE_UNWIND_FP_NEEDS_REGS 1
#else
#define SAMPLE_UNWIND_FP_NEEDS_REGS 0
#endif

/* Bytes of queued stack copies beyond which the queue is full: the caller
 * keeps further samples elsewhere (the recording's spill) instead of
 * building them; a sample built anyway is unwound at once, a file whose
 * table is still compiling as one without. */
#define SAMPLE_UNWIND_QUEUE_MAX_BYTES (32u * 1024u * 1024u)

/* Counters a recording keeps for its statistics. */
typedef struct SampleUnwindStats {
        uint64_t samples;                 /* samples unwound from their stack copy */
        uint64_t frames;                  /* user frames they produced */
        uint64_t stops[_UNWIND_STOP_MAX]; /* why each unwind ended */
        uint64_t fp_frames;               /* frames found through the frame-pointer fallback */
        uint64_t deferred;                /* samples that waited for a table compile */
} SampleUnwindStats;

typedef struct SampleUnwindPending SampleUnwindPending;

/* One recording's unwinding state. */
typedef struct SampleUnwinder {
        UnwindTables *tables;             /* the daemon's (borrowed) */
        uint32_t owner;                   /* whose samples these are (the uid): its turn at compiles */
        SampleUnwindStats stats;
        SampleUnwindPending *pending;
        size_t n_pending, allocated_pending, pending_bytes;
} SampleUnwinder;

/* Builds the SAMPLE addresses of s into addrs (at most max), keeping the
 * kernel part only when `kernel`. Returns how many were written; 0 with
 * *deferred set when the sample was queued for sample_unwinder_flush(). */
size_t sample_unwinder_build(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, const PerfSample *s,
                             uint64_t *addrs, size_t max, bool *deferred);

/* The same for frame-pointer mode with the leaf decision (sample-stack.h,
 * aarch64): a sample whose leaf's table is not decided yet waits in the
 * same queue, bounded the same way. */
size_t sample_unwinder_build_fp(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, const PerfSample *s,
                                uint64_t *addrs, size_t max, bool *deferred);

/* Whether the queue is full: a sample handed to sample_unwinder_build()
 * now would be unwound at once, without the tables still compiling. */
bool sample_unwinder_queue_full(const SampleUnwinder *u);

/* Called with each queued sample's addresses, in order. */
typedef int (*SampleUnwindEmit)(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata);

/* Samples one flush call unwinds at most (and records one replay of the
 * spill hands on): a table that many samples waited for is worked off in
 * slices, so D-Bus calls and other recordings are served in between (2308
 * samples in one go held the loop for 110 ms). */
#define SAMPLE_UNWIND_FLUSH_BATCH 256u

/* Hands queued samples to emit in order (addrs is scratch space of max
 * entries), up to the first whose table is still compiling (asking for it)
 * and at most `max_samples` of them; with `force` every one, a file whose
 * table is not there as one without (the end of a session that cannot
 * wait). Never waits for the helper. Returns the first negative value emit
 * returned, else 1 when it stopped at max_samples with samples left that
 * may be ready (call again soon), else 0. */
int sample_unwinder_flush(SampleUnwinder *u, const ProcessMaps *maps, bool kernel, uint64_t *addrs, size_t max,
                          bool force, size_t max_samples, SampleUnwindEmit emit, void *userdata);

/* Asks ahead of need for the table of the file mapped at address in pid (a
 * new executable mapping), so it is usually there before the first sample. */
void sample_unwinder_prepare(SampleUnwinder *u, const ProcessMaps *maps, int32_t pid, uint64_t address);

/* The same for every mapping of every process in maps (a start snapshot). */
void sample_unwinder_prepare_all(SampleUnwinder *u, const ProcessMaps *maps);

/* Frees the queue. */
void sample_unwinder_done(SampleUnwinder *u);
