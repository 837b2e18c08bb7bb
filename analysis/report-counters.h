/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-counters.h: the counters of a capture as series (shared by
 * --counters and --timeline). */
#pragma once

#include <glib.h>

#include "capture.h"
#include "report-pid-filter.h"
#include "report-profile.h"

typedef struct CounterPoint {
        int64_t time;
        double value;
} CounterPoint;

typedef struct CounterSeries {
        uint32_t id;
        int32_t pid; /* who defined it: -1 for the system counters */
        CaptureCounterDef def;
        GArray *points; /* CounterPoint, in time order */
} CounterSeries;

/* All counters that have a definition, ordered by category, name, pid:
 * the system's, and those of the processes filter wants. Values are
 * doubles whatever the counter's type. NULL with *ret_error when the
 * capture is damaged (said on stderr). */
GPtrArray *report_counters_load(const ReportProfile *p, const ReportPidFilter *filter, int *ret_error);
