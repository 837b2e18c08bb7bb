/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-off-cpu.h: the off-CPU views of `periscope report`
 * (docs/off-cpu.md): what a recording with --off-cpu saw of its threads'
 * waits, and the wall-clock table (on the CPU, waiting for a CPU,
 * blocked) per thread. */
#pragma once

#include <stdio.h>

#include "report-callgraph.h"
#include "report-profile.h"

/* Whether the capture was recorded with off-CPU profiles. */
gboolean report_profile_has_off_cpu(const ReportProfile *p);

/* The recording's CPU sampling frequency (Hz), for samples as time. */
guint32 report_off_cpu_frequency(const ReportProfile *p);

/* Lines under the summary: blocked time (with a stack, without), short
 * waits only counted, preemptions, and whether switches were sampled
 * under a storm. Says when the capture has no off-CPU data. */
void report_print_off_cpu_summary(FILE *out, const ReportProfile *p, const ReportCallGraph *g);

/* One row per thread of p that passes filter: its samples as CPU time,
 * its time waiting for a CPU, blocked (written and short waits), and the
 * sum, busiest first. */
void report_print_wall(FILE *out, const ReportProfile *p, const ReportFilter *filter, guint limit);
