/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-stage.h: the "symbolize" post-stop stage of a recording: every
 * (pid, address) it noted is named through the sandbox helper
 * (symbolize-addresses.c) and __symbols__ and __periscope/symbols are embedded in its
 * capture. It gets its inputs and a progress callback, not the recording. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "address-set.h"
#include "capture.h"
#include "process.h"
#include "resolver.h"
#include "symbolize-addresses.h"

typedef struct SymbolizeStageInput {
        CaptureWriter *writer;         /* the capture the tables go into */
        const AddressSet *addresses;   /* what to name */
        ProcessMaps *maps;             /* every process's mappings, retired ones too */
        PinnedFiles *pinned;           /* the files as they were mapped */
        const JitFiles *jit_files;     /* the processes' perf maps (may be NULL) */
        Resolver *resolver;            /* containers' debug trees; gets the refusals (may be NULL) */
        bool kernel_symbols;           /* name kernel addresses (the caller may see them) */
        bool debuginfod;               /* ask $DEBUGINFOD_URLS for missing debug files */
        HelperClientConfig helper;     /* how the helper is started (the daemon's); its
                                        * time_budget_ms is the recording's */
        const SymbolizeCut *cut;       /* SymbolizeOptions.cut; may be NULL */
} SymbolizeStageInput;

/* Progress of the stage in addresses: called at both ends and at most
 * every 100 ms in between. */
typedef void (*SymbolizeStageProgress)(uint64_t done, uint64_t total, void *userdata);

/* Runs the stage synchronously (the helper's per-request timeout bounds
 * each step); *ret_stats and *ret_msec say what it did. Returns 0 or a
 * negative errno (out of memory, the capture refused the tables). For
 * tools: the service runs it with symbolize_stage_start(). */
int symbolize_stage_run(const SymbolizeStageInput *in, SymbolizeStageProgress progress, void *userdata,
                        SymbolizeStats *ret_stats, int64_t *ret_msec);

typedef struct SymbolizeJob SymbolizeJob;

/* The end of a stage started with symbolize_stage_start(): what
 * symbolize_stage_run() returned and said. */
typedef void (*SymbolizeStageDone)(int result, const SymbolizeStats *stats, int64_t msec, void *userdata);

/* Runs the stage on a fiber (fiber.h) from event loop e: every helper
 * round trip waits in the loop, and CPU work gives way every few ms, so
 * the service answers and other recordings drain meanwhile. *in (and what
 * it points to) must stay valid until done is called, from the loop. The
 * job frees itself after done. */
int symbolize_stage_start(sd_event *e, const SymbolizeStageInput *in, SymbolizeStageProgress progress,
                          SymbolizeStageDone done, void *userdata, SymbolizeJob **ret);

/* Ends a started job now: what is left gets "[unresolved: <cut->why>]"
 * (set it and cut->now first; else the helper's failure), the tables are
 * still written with every mapping's build-id, and done is called before
 * this returns. */
void symbolize_job_cancel(SymbolizeJob *j);
