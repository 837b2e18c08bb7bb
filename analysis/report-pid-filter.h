/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-pid-filter.h: the --pid/--comm selection as the views that read a
 * capture frame by frame (marks, counters, timeline, memory, containers)
 * apply it: a predicate on the pid of each frame. */
#pragma once

#include <stdint.h>

#include <glib.h>

typedef struct ReportPidFilter {
        gboolean (*match)(const void *data, int32_t pid);
        const void *data;
} ReportPidFilter;

/* Whether frames of pid are wanted; a NULL filter (or one without a
 * predicate) wants everything. */
static inline gboolean report_pid_wanted(const ReportPidFilter *f, int32_t pid) {
        return !f || !f->match || f->match(f->data, pid);
}
