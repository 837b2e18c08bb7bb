/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-modes.h: which `periscope report` options go together. Every view
 * belongs to a family; families either combine (a call tree and a flame
 * graph of the same samples, allocations as a tree) or are refused with a
 * message naming both options, never silently ignored. */
#pragma once

#include <glib.h>

typedef enum ReportFamily {
        REPORT_FAMILY_STACKS,     /* --tree, --callers, --callees, --mappings, --by-process */
        REPORT_FAMILY_FOLDED,     /* --folded: only folded stacks on stdout */
        REPORT_FAMILY_FLAME,      /* --flamegraph */
        REPORT_FAMILY_EVENTS,     /* --marks, --counters, --timeline */
        REPORT_FAMILY_MEMORY,     /* --memory */
        REPORT_FAMILY_CONTAINER,  /* --by-container */
        REPORT_FAMILY_DIFF,       /* --diff */
        REPORT_FAMILY_FLAME_LOOK, /* --title, --width, --inverted: need a flame graph */
        REPORT_FAMILY_ROOTS,      /* --process-root, --no-process-root: the shape of trees */
        REPORT_FAMILY_NAMING,     /* --lines: how stack frames are named */
        REPORT_FAMILY_OFF_CPU,    /* --off-cpu, --wall: where threads waited */
        _REPORT_FAMILY_MAX,
} ReportFamily;

typedef struct ReportModeOption {
        const char *name; /* as typed: "--tree" */
        gboolean set;
        ReportFamily family;
} ReportModeOption;

/* Checks every pair of the options that are set; on the first pair that
 * does not combine, prints why (naming both) on stderr and returns FALSE. */
gboolean report_modes_check(const ReportModeOption *options, gsize n);
