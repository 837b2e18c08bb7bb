/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-extras.h: the views of `periscope report` for what programs and
 * the system said besides stacks (control fd, counters, memory profiler):
 *   --marks           marks by group and name (count, durations), logs
 *   --counters        every counter: samples, min, mean, max, last
 *   --timeline FILE   SVG: counters over time with the marks below them
 *   --memory          report-memory.h
 * Each prints to out and returns 0, or a negative errno after saying why on
 * stderr. */
#pragma once

#include <stdio.h>

#include <glib.h>

#include "report-pid-filter.h"
#include "report-profile.h"

/* Writes size bytes of data to path (the command line's output files);
 * -1 with *error. */
typedef int (*ReportSaveFn)(const char *path, const void *data, size_t size, GError **error);

int report_marks(const ReportProfile *p, int limit, const ReportPidFilter *filter, FILE *out);
int report_counters(const ReportProfile *p, const ReportPidFilter *filter, FILE *out);
int report_timeline(const ReportProfile *p, const char *svg_path, ReportSaveFn save, const ReportPidFilter *filter,
                    FILE *out);

/* Runs the views asked for, in the order above, on the frames of the
 * processes filter wants (the system's counters and marks always). */
int report_extras(const ReportProfile *p, gboolean marks, gboolean counters, const char *timeline, ReportSaveFn save,
                  gboolean memory, int limit, const ReportPidFilter *filter, FILE *out);
