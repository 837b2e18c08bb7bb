/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-memory.h: `periscope report --memory`: what the ALLOCATION frames
 * of a capture (from libperiscope-memory.so or Sysprof's memprof) say:
 * bytes allocated and still live at the end by call site (the leaks),
 * short-lived temporaries (freed before their thread allocated anything
 * else, as heaptrack counts them), and the peak of live bytes. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "report-pid-filter.h"
#include "report-profile.h"

typedef struct ReportMemoryOptions {
        int limit;                     /* rows per table; 0: 25 */
        int32_t pid;                   /* only this process; 0: all */
        const ReportPidFilter *filter; /* and only the processes it wants; NULL: all */
} ReportMemoryOptions;

/* Prints the memory report of the capture model p to out; its symbols (if
 * usable) name call sites, else a site is its address (with a warning on
 * stderr). Returns 0, or a negative errno after printing why to stderr
 * (e.g. no ALLOCATION frames). */
int report_memory(const ReportProfile *p, const ReportMemoryOptions *o, FILE *out);

/* Same for a capture file, loaded for this alone. */
int report_memory_path(const char *path, const ReportMemoryOptions *o, FILE *out);
