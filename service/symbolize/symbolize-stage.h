/* symbolize-stage.h: the "symbolize" post-stop stage of a recording: every
 * (pid, address) it noted is named through the sandbox helper
 * (symbolize-addresses.c) and __symbols__ and __periscope/symbols are embedded in its
 * capture. It gets its inputs and a progress callback, not the recording. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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
        HelperClientConfig helper;     /* how the helper is started (the daemon's) */
} SymbolizeStageInput;

/* Progress of the stage in addresses: called at both ends and at most
 * every 100 ms in between. */
typedef void (*SymbolizeStageProgress)(uint64_t done, uint64_t total, void *userdata);

/* Runs the stage synchronously (the helper's per-request timeout bounds
 * each step); *ret_stats and *ret_msec say what it did. Returns 0 or a
 * negative errno (out of memory, the capture refused the tables). */
int symbolize_stage_run(const SymbolizeStageInput *in, SymbolizeStageProgress progress, void *userdata,
                        SymbolizeStats *ret_stats, int64_t *ret_msec);
