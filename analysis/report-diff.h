/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-diff.h: `periscope report --diff BEFORE AFTER`: how the self and
 * total time of each function changed between two captures. Each side is
 * normalized by its own samples (shares, not counts), as `perf diff` and
 * FlameGraph's difffolded.pl compare profiles of different lengths. */
#pragma once

#include <stdio.h>

#include "report-callgraph.h"

/* Prints both captures' sample counts, then the functions whose self share
 * changed most and those whose total share changed most (at most limit
 * rows each; after% - before%, positive: grew). */
void report_print_diff(FILE *out, const ReportCallGraph *before, const ReportCallGraph *after, guint limit);

/* One line per stack of either capture, "outer;…;inner BEFORE AFTER"
 * (samples; 0 where a capture lacks it), sorted: the input of
 * flamegraph.pl's differential mode, as difffolded.pl writes it. */
void report_print_folded_diff(FILE *out, ReportCallGraph *before, ReportCallGraph *after);
