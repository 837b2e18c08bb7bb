/* report-counters.h: the counters of a capture as series (shared by
 * --counters and --timeline). */
#pragma once

#include <glib.h>

#include "capture-reader.h"

typedef struct CounterPoint {
        int64_t time;
        double value;
} CounterPoint;

typedef struct CounterSeries {
        uint32_t id;
        int32_t pid;            /* who defined it: -1 for the system counters */
        CaptureCounterDef def;
        GArray *points;         /* CounterPoint, in time order */
} CounterSeries;

/* All counters that have a definition, ordered by category, name, pid.
 * Values are doubles whatever the counter's type. */
GPtrArray *report_counters_load(CaptureReader *r, int *ret_error);
