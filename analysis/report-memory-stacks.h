/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-memory-stacks.h: the whole call stacks of `periscope report
 * --memory`: the bytes still live at the end (leaks) and the short-lived
 * temporaries, one row per distinct stack ("main;leak_path;make_buf"),
 * so two paths into the same allocating function stay apart. */
#pragma once

#include <stdio.h>

#include <glib.h>

#include "report-callgraph.h"

/* Prints the leaked and temporary stacks of the capture model p (which
 * weighs allocations) that pass filter (--pid/--comm), at most limit rows
 * each; p is weighed as before when it returns. */
void report_print_memory_stacks(FILE *out, ReportProfile *p, const ReportFilter *filter, guint limit);
