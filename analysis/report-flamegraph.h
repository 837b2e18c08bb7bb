/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-flamegraph.h: `periscope report --flamegraph OUT.svg`: a
 * self-contained SVG flame graph (inline CSS and JavaScript, no network):
 * hover shows name, samples and percent; click zooms into a frame; the search
 * box highlights matching frames and says how many samples they cover. */
#pragma once

#include <glib.h>

#include "report-callgraph.h"

#define REPORT_FLAME_DEFAULT_WIDTH 1200
#define REPORT_FLAME_MIN_WIDTH 400
#define REPORT_FLAME_MAX_WIDTH 20000

typedef struct ReportFlameOptions {
        const char *title;             /* shown at the top */
        int width;                     /* pixels; 0: REPORT_FLAME_DEFAULT_WIDTH */
        gboolean inverted;             /* icicle: the roots at the top, stacks hanging down */
        const ReportCallGraph *before; /* differential: colour each frame by the change of
                                        * its share from before (red grew, blue shrank); or NULL */
} ReportFlameOptions;

/* The flame graph of g as an SVG document (the caller writes it). With
 * opt->before, frame widths are g's and colours the change against before,
 * frame by frame along the same path. */
GString *report_flamegraph_svg(const ReportCallGraph *g, const ReportFlameOptions *opt);
