/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-stages.h: what runs after sampling stopped and the rings were
 * drained, in order, before the statistics are written and the recording
 * finishes: the stages of the parts (recording-private.h), in the order
 * of recording.c's table. A stage gets its inputs and a progress callback
 * (and its part's state). It returns 0, or a negative errno when it failed
 * (logged; the next stage still runs), or 1 when it goes on in the event
 * loop (the control rings' drain in slices, the trace-fd merge and the
 * symbolize stage on fibers): it then
 * calls done() later, and the recording stays "finishing" meanwhile while
 * the service serves everyone else. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "symbolize.h"
#include "capture.h"
#include "control.h"
#include "helper-client.h"
#include "process.h"
#include "recording-options.h"
#include "resolver.h"

/* What a recording hands its stages. */
typedef struct RecordingStageInput {
        sd_event *event;              /* where stages that return 1 go on */
        unsigned recording_id;        /* for logs */
        CaptureWriter *writer;
        int64_t start_time;           /* the capture's, CLOCK_MONOTONIC ns */
        int64_t end_time;             /* when sampling stopped, CLOCK_MONOTONIC ns */
        const RecordOptions *options;
        bool kernel;                  /* the owner may see kernel addresses */
        ProcessMaps *maps;
        PinnedFiles *pinned;
        const JitFiles *jit_files;    /* the processes' perf maps */
        const AddressSet *addresses;  /* every address samples and rings held */
        Resolver *resolver;
        HelperClientConfig helper;    /* time_budget_ms: the recording's helper time budget */
        const SymbolizeCut *cut;      /* the service is stopping: why set: hurry; now: the stages'
                                       * time is up, they finish at once with what they have */
} RecordingStageInput;

/* RecordingStageResults.cut: what a stage could not finish because it was cut short. */
#define RECORDING_CUT_UNWIND_TABLES 0x1u /* samples unwound without tables still compiling */
#define RECORDING_CUT_TRACE_FDS 0x2u     /* trace fds not (all) merged */
#define RECORDING_CUT_SYMBOLIZE 0x4u     /* addresses left unnamed (`periscope symbolize` names them later) */

/* What stages report back, summed over the stages. */
typedef struct RecordingStageResults {
        uint64_t helper_failures;     /* files the sandboxed helper failed on */
        uint64_t user_addresses;      /* distinct user-space addresses symbolized */
        uint64_t user_named;          /* ... of them named */
        uint64_t helper_ms;           /* time the helper spent answering symbolize requests */
        bool helper_budget_spent;     /* ... and it reached the recording's budget */
        unsigned cut;                 /* RECORDING_CUT_* */
        uint64_t names_cut_short;     /* addresses the symbolize stage left unnamed when cut short */
} RecordingStageResults;

/* A stage's progress (Progress(stage, done, total) on D-Bus). */
typedef void (*RecordingStageProgress)(const char *stage, uint64_t done, uint64_t total, void *userdata);

/* The end of a stage whose run() returned 1 (result as run()'s). */
typedef void (*RecordingStageDone)(int result, void *userdata);

/* A stage going on in the event loop: cancel(job) makes it end now (its
 * waits fail at once), and done() is called before cancel returns. */
typedef struct RecordingStageJob {
        void (*cancel)(void *job);
        void *job;
} RecordingStageJob;
