/* recording-stages.h: what runs after sampling stopped and the rings were
 * drained, in order, before the statistics are written and Finished is
 * emitted. Adding a stage: write `int my_stage(Recording *r)` and add a row
 * to the table in recording-stages.c. A stage returns 0 when done, a
 * negative errno when it failed (the next stage still runs), or 1 when it
 * continues asynchronously and will call recording_stage_done() later. It
 * reports progress with recording_emit_progress(). */
#pragma once

#include <stddef.h>

#include "recording.h"

typedef struct RecordingStage {
        const char *name;          /* Progress's stage argument */
        int (*run)(Recording *r);
} RecordingStage;

extern const RecordingStage recording_stages[];
extern const size_t recording_n_stages;
