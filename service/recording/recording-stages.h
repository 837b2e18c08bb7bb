/* recording-stages.h: what runs after sampling stopped and the rings were
 * drained, in order, before the statistics are written and the recording
 * finishes. A stage gets its inputs and a progress callback, never the
 * recording: adding one is a function of that shape and a row in the table
 * in recording-stages.c. It returns 0, or a negative errno when it failed
 * (logged; the next stage still runs). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"
#include "capture.h"
#include "helper-client.h"
#include "process.h"
#include "recording-options.h"
#include "resolver.h"

/* What a recording hands its stages. */
typedef struct RecordingStageInput {
        unsigned recording_id;        /* for logs */
        CaptureWriter *writer;
        int64_t start_time;           /* the capture's, CLOCK_MONOTONIC ns */
        const RecordOptions *options;
        bool kernel;                  /* the owner may see kernel addresses */
        ProcessMaps *maps;
        PinnedFiles *pinned;
        const JitFiles *jit_files;    /* the processes' perf maps */
        const AddressSet *addresses;  /* every address samples and rings held */
        Resolver *resolver;
        HelperClientConfig helper;
} RecordingStageInput;

/* What stages report back, summed over the stages. */
typedef struct RecordingStageResults {
        uint64_t helper_failures;     /* files the sandboxed helper failed on */
} RecordingStageResults;

/* A stage's progress (Progress(stage, done, total) on D-Bus). */
typedef void (*RecordingStageProgress)(const char *stage, uint64_t done, uint64_t total, void *userdata);

typedef struct RecordingStage {
        const char *name;          /* Progress's stage argument */
        int (*run)(const RecordingStageInput *in, RecordingStageResults *results, RecordingStageProgress progress,
                   void *userdata);
} RecordingStage;

extern const RecordingStage recording_stages[];
extern const size_t recording_n_stages;
