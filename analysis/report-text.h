/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-text.h: the text outputs of `periscope report`: summary, hottest
 * functions, call tree, callers/callees and folded stacks. */
#pragma once

#include <stdio.h>

#include "report-callgraph.h"

/* Capture, sample counts, which symbol table was used, warnings. */
void report_print_summary(FILE *out, const ReportProfile *p, const ReportCallGraph *g);

/* Where the symbols of each mapping came from (Periscope table only): file,
 * how it was found, identity verdict, build-id; only processes with
 * samples after filtering. */
void report_print_mappings(FILE *out, const ReportProfile *p, const ReportCallGraph *g);

/* Top `limit` functions by self time, then by total time. */
void report_print_hottest(FILE *out, const ReportCallGraph *g, guint limit);

/* Call tree from the entry points down; nodes under min_percent of all
 * samples are hidden (and counted in a final line). */
void report_print_tree(FILE *out, const ReportCallGraph *g, double min_percent);

/* Callers (or callees) of name. Returns FALSE (and says so, with similar
 * names, on stderr) when no function has that name. */
gboolean report_print_neighbours(FILE *out, const ReportCallGraph *g, const char *name, gboolean callers);

/* One line per distinct stack, "outer;…;inner count", sorted; the format of
 * flamegraph.pl / inferno / speedscope. */
void report_print_folded(FILE *out, ReportCallGraph *g);

/* One line per process, most samples first (at most limit): pid, command
 * line (shortened), samples, share, and its hottest function by self time. */
void report_print_by_process(FILE *out, const ReportCallGraph *g, guint limit);

/* One line per thread under each of its names, most samples first (at most
 * limit): samples, share, tid, pid, thread name, process, and its hottest
 * function by self time. */
void report_print_by_thread(FILE *out, const ReportCallGraph *g, guint limit);

/* The folded line of a stack without its count (';' inside labels becomes
 * ':'); shared with the flame graph. */
char *report_folded_stack(ReportCallGraph *g, const ReportStack *s);
